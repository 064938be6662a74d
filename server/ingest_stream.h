// IngestStream: the reactor of one Ingest call (a client stream of
// IngestBatch messages). Each batch is applied to its session on the gRPC
// thread that delivered it, in OnReadDone, before the next read starts: the
// batches of one stream are applied in order, and Session's lock orders
// them against other streams. The call is raw (serialised messages): each
// batch is parsed into one IngestBatch kept for the whole stream, after
// emptying it without freeing its storage, so in steady state decoding a
// batch allocates nothing per event, in either form.
//
// Shutdown needs nothing from here: grpc::Server::Shutdown lets a batch in
// flight complete, then cancels the call, and the failed read finishes it.
//
// Thread contract: driven by gRPC, whose reactions for one call never run
// concurrently; no other thread touches it, so it has no lock.
#ifndef SCHEDCACHE_SERVER_INGEST_STREAM_H_
#define SCHEDCACHE_SERVER_INGEST_STREAM_H_

#include <cstdint>
#include <memory>

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/server_callback.h>

#include "absl/status/status.h"
#include "schedcache/v1/schedcache.pb.h"
#include "server/limits.h"
#include "server/session.h"
#include "server/session_manager.h"
#include "server/stream_limiter.h"

namespace schedcache {

class IngestStream final : public grpc::ServerReadReactor<grpc::ByteBuffer> {
 public:
  // `sessions` and `limiter` must outlive the call; gRPC owns the reactor
  // and it deletes itself when done. `response` receives the serialised
  // IngestSummary.
  IngestStream(SessionManager& sessions, StreamLimiter& limiter,
               const Limits& limits, grpc::ByteBuffer* response);

  void OnReadDone(bool ok) override;
  void OnDone() override;

 private:
  // Parse empties batch_, keeping its storage, and parses read_ into it.
  absl::Status Parse();
  // Apply applies batch_; an error ends the stream.
  absl::Status Apply();
  void FinishWith(const absl::Status& status);

  SessionManager& sessions_;
  StreamLimiter& limiter_;
  const int max_batch_events_;
  grpc::ByteBuffer* const response_;
  bool admitted_ = false;

  grpc::ByteBuffer read_;
  v1::IngestBatch batch_;
  std::shared_ptr<Session> session_;
  IngestTally tally_;
  uint64_t batches_ = 0;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_INGEST_STREAM_H_
