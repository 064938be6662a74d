// IngestStream: the reactor of one Ingest call (a client stream of
// IngestBatch messages). The call is raw (serialised messages): each batch
// is parsed into one of two IngestBatch slots kept for the whole stream,
// after emptying it without freeing its storage, so in steady state
// decoding a batch allocates nothing per event, in either form.
//
// Pipelining: while one batch is applied to its session, the next is read
// and parsed (on whichever gRPC thread delivers it), so socket reads and
// parsing overlap the engine's work. Batches are applied strictly in
// stream order, one at a time, and Session's lock orders them against
// other streams; at most two batches are held (one applying, one parsed),
// so a client that sends faster than the session applies is held back by
// gRPC's flow control.
//
// Shutdown: Server::Stop calls IngestStreams::StopAll before gRPC's own
// shutdown, which would cancel an idle stream with no word of what was
// applied. Each stream then ends, after the batch it is applying (a batch
// parsed and waiting is not applied), with UNAVAILABLE. A stream that ends
// with an error carries its IngestSummary in trailing metadata
// (kIngestSummaryTrailer), so the client knows exactly what was applied.
//
// Thread contract: thread-safe. gRPC may run the next OnReadDone while the
// previous one is still applying; mu_ guards the pipeline's state, and the
// slot, session and tally a batch needs belong to the one thread applying.
#ifndef SCHEDCACHE_SERVER_INGEST_STREAM_H_
#define SCHEDCACHE_SERVER_INGEST_STREAM_H_

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/server_callback.h>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "events/event.h"
#include "schedcache/v1/schedcache.pb.h"
#include "server/limits.h"
#include "server/session.h"
#include "server/session_manager.h"
#include "server/stream_limiter.h"

namespace schedcache {

// IngestTally counts one Ingest stream's events: exact totals and the first
// kMaxReasons rejections, indexed across the stream. Owned by one stream;
// not thread-safe.
class IngestTally {
 public:
  static constexpr int kMaxReasons = 16;

  // Reject records that the event `offset` events into the current batch
  // was rejected for `reason`. Offsets increase within a batch.
  void Reject(uint64_t offset, const absl::Status& reason);
  // EndBatch counts the current batch's `events` events, those not
  // rejected as accepted, and starts the next batch after them.
  void EndBatch(uint64_t events);
  uint64_t accepted() const { return accepted_; }
  uint64_t rejected() const { return rejected_; }
  // Fill writes the totals and first rejections into `summary`.
  void Fill(v1::IngestSummary& summary) const;

 private:
  uint64_t accepted_ = 0;
  uint64_t rejected_ = 0;
  uint64_t batch_start_ = 0;     // stream index of the batch's first event
  uint64_t batch_rejected_ = 0;  // rejections of the current batch
  std::vector<v1::Rejection> first_rejections_;
};

// StreamComms is the last comm one Ingest stream sent for each process: a
// client sends a process's comm only when it changes on the stream
// (docs/SERVICE.md, Ingest), so the server gives each process its name
// again on the first sample of every batch, as a client that repeated it
// per batch would. The engine may have evicted the process meanwhile (idle
// timeout, max_processes) and would take it back with no name; this
// memory is the stream's, not the engine's. A process exit or start
// forgets the process, as the client does. It holds at most `capacity`
// processes, the session's --max_processes: a stream that names more
// (processes that never exit) forgets them all and learns again, so a
// client cannot grow the server's memory without bound; a process the
// engine evicted meanwhile then comes back unnamed. Not thread-safe: the
// batches of one stream decode one at a time.
class StreamComms {
 public:
  explicit StreamComms(int64_t capacity) : capacity_(capacity) {}
  // StartBatch begins the next batch: every known process gets its comm
  // again on its first sample.
  void StartBatch() { ++batch_; }
  // Fill remembers the comm `sample` carries or, if it carries none, gives
  // it the process's last one when this batch has not yet. Inline: most
  // samples are of a process already handled this batch.
  void Fill(Sample& sample) {
    const Done& done = DoneSlot(sample.tgid);
    if (sample.comm.empty() && done.tgid == sample.tgid &&
        done.batch == batch_) {
      return;
    }
    FillFirst(sample);
  }
  // Forget drops what is known of process `tgid`.
  void Forget(int32_t tgid);

 private:
  struct Known {
    Comm comm;
    uint64_t batch;  // the last batch a sample of the process carried it
  };
  // Done is a slot of a small direct-mapped cache (by tgid) of processes
  // Fill has handled this batch, so that the samples after a process's
  // first in a batch skip the map: a lookup per sample was 7% of the
  // server's CPU (docs/PERFORMANCE.md, "Performance: server wire").
  struct Done {
    int32_t tgid = 0;
    uint64_t batch = 0;  // batch_ starts at 1, so no slot is done at first
  };
  static constexpr size_t kDoneSlots = 64;
  Done& DoneSlot(int32_t tgid) {
    return done_[static_cast<uint32_t>(tgid) % kDoneSlots];
  }
  // FillFirst is Fill for a sample that carries a comm, or is the first of
  // its process this batch (or whose slot another process took).
  void FillFirst(Sample& sample);

  const int64_t capacity_;
  absl::flat_hash_map<int32_t, Known> by_tgid_;
  std::array<Done, kDoneSlots> done_{};
  uint64_t batch_ = 0;
};

// DecodedBatch is one IngestBatch read into engine events, kept for the
// stream's life so that in steady state decoding allocates nothing.
// Not thread-safe.
class DecodedBatch {
 public:
  // Decode empties this, keeping its storage, and reads every event of
  // `batch`, its samples' comm filled in from and noted in `comms`.
  // REQUIRES: CheckBatchForm(batch) is OK.
  void Decode(const v1::IngestBatch& batch, StreamComms& comms);
  // ApplyTo applies the events to `session` in one Session::ApplyBatch and
  // counts each in `tally`, unreadable rows among them, in batch order.
  // Returns the Close status once the session is closed (then nothing is
  // counted).
  absl::Status ApplyTo(Session& session, IngestTally& tally) const;

 private:
  // Unreadable is a row no event could be read from, at `position` in the
  // batch.
  struct Unreadable {
    uint64_t position;
    absl::Status reason;
  };
  std::vector<Event> events_;
  std::vector<Unreadable> unreadable_;  // by position
};

class IngestStream;

// IngestStreams is the set of open Ingest streams, so that shutdown can end
// each one with its summary. Thread-safe.
class IngestStreams {
 public:
  // Add registers `stream`; false once StopAll has run (the stream must
  // end at once).
  bool Add(IngestStream* stream) ABSL_LOCKS_EXCLUDED(mu_);
  // Remove unregisters `stream`, waiting while StopAll is still calling the
  // streams, so none is deleted under it.
  void Remove(IngestStream* stream) ABSL_LOCKS_EXCLUDED(mu_);
  // StopAll ends every open stream with `why` (see IngestStream::Stop) and
  // refuses later ones. REQUIRES: !why.ok().
  void StopAll(const absl::Status& why) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  absl::Mutex mu_;
  absl::flat_hash_set<IngestStream*> open_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;  // StopAll is calling them
};

class IngestStream final : public grpc::ServerReadReactor<grpc::ByteBuffer> {
 public:
  // `sessions`, `limiter` and `streams` must outlive the call; gRPC owns
  // the reactor and it deletes itself when done. `response` receives the
  // serialised IngestSummary; `context` the summary of a failed stream.
  IngestStream(SessionManager& sessions, StreamLimiter& limiter,
               IngestStreams& streams, const Limits& limits,
               grpc::CallbackServerContext& context,
               grpc::ByteBuffer* response);

  // Stop ends the stream with `why` once the batch being applied (if any)
  // is done, with the summary of what was applied. No-op when it has ended.
  void Stop(const absl::Status& why) ABSL_LOCKS_EXCLUDED(mu_);

  void OnReadDone(bool ok) override;
  void OnDone() override;

 private:
  static constexpr int kSlots = 2;

  // Parse empties slot `slot`, keeping its storage, and parses read_ into
  // it; checks the batch's size and form, then decodes its events (on the
  // reading thread, so decoding overlaps the batch applying).
  absl::Status Parse(int slot, uint64_t number);
  // ApplyFrom applies slot `slot`, then every batch parsed meanwhile, in
  // order, starting the next read whenever a slot frees; finishes the call
  // when reads are over and nothing is left, or on an error.
  void ApplyFrom(int slot);
  // Apply applies one parsed slot to the session; an error ends the stream.
  absl::Status Apply(int slot);
  // EndReads records that no read will deliver a batch (`why` OK: the
  // client closed its side) and finishes the call if nothing is applying.
  void EndReads(absl::Status why);
  // FinishWith ends the call: the summary of `batches` batches, or the
  // error with how far the stream got. Called once, with nothing applying.
  void FinishWith(const absl::Status& status, uint64_t batches);

  SessionManager& sessions_;
  StreamLimiter& limiter_;
  IngestStreams& streams_;
  const int max_batch_events_;
  grpc::CallbackServerContext& context_;
  grpc::ByteBuffer* const response_;
  bool admitted_ = false;

  // Written by the read in flight, read by the OnReadDone it completes.
  grpc::ByteBuffer read_;
  struct Slot {
    v1::IngestBatch batch;
    DecodedBatch events;  // the batch's events, decoded by Parse
    uint64_t number = 0;  // the batch's position in the stream
  };
  Slot slots_[kSlots];
  // Used only by Parse, which runs for one batch at a time.
  StreamComms comms_;

  absl::Mutex mu_;
  int applying_ ABSL_GUARDED_BY(mu_) = -1;  // slot being applied, or -1
  int waiting_ ABSL_GUARDED_BY(mu_) = -1;   // slot parsed, not applied, or -1
  bool reads_over_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t batches_read_ ABSL_GUARDED_BY(mu_) = 0;  // received, from 1
  absl::Status error_ ABSL_GUARDED_BY(mu_);  // what ends the stream early

  // Used only by the thread applying (handed over under mu_).
  std::shared_ptr<Session> session_;
  IngestTally tally_;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_INGEST_STREAM_H_
