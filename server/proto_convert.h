// Conversions between the engine's C++ values (policies/) and the API's
// messages (schedcache.v1). Event -> Sample is on the ingest hot path: it
// copies scalars into a stack value and never allocates.
//
// Thread contract: free functions, safe for concurrent use.
#ifndef SCHEDCACHE_SERVER_PROTO_CONVERT_H_
#define SCHEDCACHE_SERVER_PROTO_CONVERT_H_

#include "policies/decision.h"
#include "policies/engine.h"
#include "policies/sample.h"
#include "policies/tunables.h"
#include "schedcache/v1/schedcache.pb.h"

namespace schedcache {

// SampleFromEvent reads a sample event (event.handover() is false).
Sample SampleFromEvent(const v1::Event& event);
// HandOverFromEvent reads a hand-over event (event.handover() is true).
HandOver HandOverFromEvent(const v1::Event& event);

// ScanTriggerFromProto maps UNSPECIFIED to kTick.
ScanTrigger ScanTriggerFromProto(v1::ScanTrigger trigger);
v1::ScanTrigger ScanTriggerToProto(ScanTrigger trigger);

v1::Tunable TunableToProto(const TunableSpec& spec);
v1::PolicyDecision DecisionToProto(const PolicyDecision& decision);
v1::PolicyReport PolicyReportToProto(const PolicyReport& report);
v1::PreferenceChange ChangeToProto(const PreferenceChange& change);

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_PROTO_CONVERT_H_
