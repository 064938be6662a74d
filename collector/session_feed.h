// SessionFeed is the live collector's EventSink toward a server session:
// it passes the model's events, filtered by process, to the client
// library's batching IngestWriter (client/include/schedcache/client.h).
//
// Filter (--pid, --comm): a sample goes out when its process matches; a
// hand-over to a thread of a process that does not match goes out as the
// CPU going idle, so the session never keeps a stale current thread. With
// no filter every event goes out.
//
// Thread contract: thread-compatible.
#ifndef SCHEDCACHE_COLLECTOR_SESSION_FEED_H_
#define SCHEDCACHE_COLLECTOR_SESSION_FEED_H_

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "events/event_sink.h"
#include "collector/proc_attributes.h"
#include "schedcache/client.h"

namespace schedcache::host {

// ProcessFilter selects processes by tgid or by their /proc comm; empty:
// every process.
struct ProcessFilter {
  absl::flat_hash_set<int32_t> tgids;
  std::string comm;
  bool empty() const { return tgids.empty() && comm.empty(); }
};

class SessionFeed : public EventSink {
 public:
  // `writer` null: events are counted but go nowhere (a capture that only
  // writes --output). Both references must outlive the feed.
  SessionFeed(client::IngestWriter* writer, ProcessFilter filter,
              ProcAttributes& attributes);

  absl::Status OnSample(const Sample& sample) override;
  absl::Status OnHandOver(const HandOver& hand_over) override;
  // OnProcessExit sends every exit, whatever the filter: the process is
  // gone from /proc, so its comm can no longer be matched, and the session
  // accepts the exit of a process it does not track as a no-op.
  absl::Status OnProcessExit(const ProcessExit& exit) override;
  // OnProcessStart sends every start, whatever the filter: an exec changes
  // the comm the filter matches, and a start of a process that never
  // matches leaves the session only a record its exit removes.
  absl::Status OnProcessStart(const ProcessStart& start) override;
  // OnKernelDecision sends a decision of a matching process; the session
  // counts one of a process it does not track, so none is sent for a
  // process the filter leaves out.
  absl::Status OnKernelDecision(const KernelDecision& decision) override;

  uint64_t samples_sent() const { return samples_sent_; }
  uint64_t hand_overs_sent() const { return hand_overs_sent_; }
  uint64_t exits_sent() const { return exits_sent_; }
  uint64_t kernel_decisions_sent() const { return kernel_decisions_sent_; }

 private:
  bool Matches(int32_t tgid, int64_t now_ns);

  client::IngestWriter* const writer_;
  const ProcessFilter filter_;
  ProcAttributes& attributes_;
  uint64_t samples_sent_ = 0;
  uint64_t hand_overs_sent_ = 0;
  uint64_t exits_sent_ = 0;
  uint64_t kernel_decisions_sent_ = 0;
};

}  // namespace schedcache::host

#endif  // SCHEDCACHE_COLLECTOR_SESSION_FEED_H_
