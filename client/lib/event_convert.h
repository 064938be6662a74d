// Sample/HandOver -> schedcache.v1.Event, the client half of the ingest
// path (the server's inverse is server/proto_convert.h). Writes into an
// event the batch already holds, so a reused batch allocates nothing.
#ifndef SCHEDCACHE_CLIENT_LIB_EVENT_CONVERT_H_
#define SCHEDCACHE_CLIENT_LIB_EVENT_CONVERT_H_

#include "policies/sample.h"
#include "schedcache/v1/schedcache.pb.h"

namespace schedcache::client {

// SampleToEvent fills `event` (which must be clear) from `sample`; the
// "unchanged" markers of Sample become unset optional fields.
void SampleToEvent(const Sample& sample, v1::Event& event);
// HandOverToEvent fills `event` (which must be clear) as a hand-over.
void HandOverToEvent(const HandOver& handover, v1::Event& event);

}  // namespace schedcache::client

#endif  // SCHEDCACHE_CLIENT_LIB_EVENT_CONVERT_H_
