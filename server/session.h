// Session: one named model instance of schedcached: a topology, an Engine
// with the session's policies, and the watch streams attached to it:
// WatchPreferences streams, whose changes are numbered per session and the
// latest retained, so a watcher can resume after a broken stream; and
// WatchScans streams, which hear every executed scan while attached.
//
// Thread contract: thread-safe. The Engine is the session's single writer
// state: every call that touches it holds mu_, so the events of one session
// are applied in order (batch after batch, event after event) while
// different sessions run in parallel. No lock is held while gRPC runs
// (watch streams are flushed after mu_ is released).
#ifndef SCHEDCACHE_SERVER_SESSION_H_
#define SCHEDCACHE_SERVER_SESSION_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "events/event.h"
#include "policies/engine.h"
#include "policies/session_settings.h"
#include "schedcache/v1/schedcache.pb.h"
#include "server/rejection_reason.h"
#include "server/stream_sink.h"
#include "topology/topology.h"

namespace schedcache {

// SessionStats is a copy of what a session counts, taken at once under its
// lock, for the metrics scrape (server/metrics_collector.h) to read
// without holding it.
struct SessionStats {
  struct Policy {
    std::string name;
    PolicyStats stats;
  };
  std::string name;
  uint64_t events_accepted = 0;
  uint64_t events_rejected = 0;  // unreadable rows included
  RejectionCounts rejections{};  // by RejectionReason; sums to the above
  uint64_t processes_tracked = 0;
  uint64_t processes_evicted = 0;
  std::vector<Policy> policies;  // session order
};

// WatchFilter selects the changes one watcher hears.
struct WatchFilter {
  std::string policy;                  // empty: every policy
  absl::flat_hash_set<int32_t> tgids;  // empty: every process

  // Matches takes std::string_view, the type of PreferenceChange::policy.
  bool Matches(int32_t tgid, std::string_view policy_name) const {
    return (policy.empty() || policy == policy_name) &&
           (tgids.empty() || tgids.contains(tgid));
  }
};

// WatchSpec is what one watcher asks for (WatchPreferencesRequest).
struct WatchSpec {
  bool snapshot = false;
  uint64_t resume_incarnation = 0;  // 0: no resume
  uint64_t resume_after_sequence = 0;
  WatchFilter filter;
};

class Session {
 public:
  // Create builds the session's engine and draws its incarnation. The
  // session retains its last `watch_history` changes for resuming
  // watchers. Errors are the Engine's (InvalidArgument for bad policies or
  // tunables).
  static absl::StatusOr<std::shared_ptr<Session>> Create(
      SessionSettings settings, std::shared_ptr<const Topology> topology,
      const PolicyRegistry& registry, int watch_history);

  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::string& name() const { return settings_.name; }
  const Topology& topology() const { return *topology_; }

  // ApplyBatch applies `events` in order through Engine::ApplyBatch: a
  // rejected event leaves the session unchanged and the rest still apply;
  // `on_reject` hears each rejected event's index and error (with the
  // session's lock held, so it must be quick). `unreadable` more events of
  // the batch were rejected before they reached the engine; they count in
  // the session's rejections. Returns the Close status (NotFound when
  // deleted) once the session is closed.
  absl::Status ApplyBatch(
      absl::Span<const Event> events, uint64_t unreadable,
      absl::FunctionRef<void(size_t index, const absl::Status& error)>
          on_reject) ABSL_LOCKS_EXCLUDED(mu_);

  // Recommend answers for every policy. NotFound names an untracked tgid;
  // InvalidArgument a bad tid, cpu or timestamp (the engine's checks).
  absl::StatusOr<v1::RecommendResponse> Recommend(
      const RecommendRequest& request) ABSL_LOCKS_EXCLUDED(mu_);

  // AddCollectorLosses adds a live collector's loss increments (an
  // IngestBatch's collector_losses) to the totals Report shows.
  void AddCollectorLosses(const v1::CollectorLosses& losses)
      ABSL_LOCKS_EXCLUDED(mu_);

  v1::Report Report() const ABSL_LOCKS_EXCLUDED(mu_);
  // Stats copies the session's counters and statistics (per policy, its
  // histograms: one counter per CPU and some 500 more), holding the lock
  // only for the copy.
  SessionStats Stats() const ABSL_LOCKS_EXCLUDED(mu_);
  v1::Session Describe() const ABSL_LOCKS_EXCLUDED(mu_);

  uint64_t incarnation() const { return incarnation_; }

  // AddWatcher attaches a stream, after queuing into it what `spec` asks
  // to read first (a snapshot, or a replay of retained changes; then
  // Synced; see WatchPreferencesRequest), in one step with respect to
  // changes: the first change queued after them is the one after Synced's
  // sequence. Returns InvalidArgument for a filter policy the session
  // lacks or a resume sequence beyond the session's in its incarnation;
  // the Close status once closed.
  absl::Status AddWatcher(std::shared_ptr<PreferenceSink> sink,
                          const WatchSpec& spec) ABSL_LOCKS_EXCLUDED(mu_);
  // RemoveWatcher detaches a stream (no-op when absent).
  void RemoveWatcher(const PreferenceSink* sink) ABSL_LOCKS_EXCLUDED(mu_);

  // AddScanWatcher attaches a stream that hears every executed scan
  // `filter` matches from now on. Returns InvalidArgument for a filter
  // policy the session lacks; the Close status once closed. Scans cost
  // nothing more while no scan watcher is attached: the engine reports
  // them only to a session that has one.
  absl::Status AddScanWatcher(std::shared_ptr<ScanSink> sink,
                              WatchFilter filter) ABSL_LOCKS_EXCLUDED(mu_);
  // RemoveScanWatcher detaches a scan stream (no-op when absent).
  void RemoveScanWatcher(const ScanSink* sink) ABSL_LOCKS_EXCLUDED(mu_);

  // Close ends the session's watch streams with `why` and makes later calls
  // that need the session return it: NotFound when it was deleted,
  // Unavailable when the server stops. REQUIRES: !why.ok().
  void Close(absl::Status why) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // Watcher is one attached stream and what it hears.
  struct Watcher {
    std::shared_ptr<PreferenceSink> sink;
    WatchFilter filter;
  };
  struct ScanWatcher {
    std::shared_ptr<ScanSink> sink;
    WatchFilter filter;
  };

  Session(SessionSettings settings, std::shared_ptr<const Topology> topology,
          std::unique_ptr<Engine> engine, uint64_t incarnation,
          int watch_history);

  // OnChange runs inside the engine (mu_ held): numbers the change, retains
  // it, queues it for every watcher whose filter matches and remembers
  // those to flush.
  void OnChange(const PreferenceChange& change)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // OnScan runs inside the engine (mu_ held) while a scan watcher is
  // attached: queues the scan for every scan watcher whose filter matches.
  void OnScan(const ScanObservation& scan) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // CheckFilterPolicy is InvalidArgument when a filter names a policy the
  // session lacks.
  absl::Status CheckFilterPolicy(const WatchFilter& filter) const;
  // WatchStart is what a watcher with `spec` reads before live changes.
  absl::StatusOr<std::vector<v1::WatchPreferencesResponse>> WatchStart(
      const WatchSpec& spec) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // ReplayFrom is true when every change after `sequence` is retained.
  bool ReplayFrom(uint64_t sequence) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Snapshot is SnapshotStart, every current preference `filter` matches,
  // then Synced.
  std::vector<v1::WatchPreferencesResponse> Snapshot(
      v1::SnapshotCause cause, const WatchFilter& filter) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // SyncedAtLast is Synced at the latest sequence.
  v1::WatchPreferencesResponse SyncedAtLast() const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // TakeFlushes returns the watchers to flush once mu_ is released.
  std::vector<std::shared_ptr<StreamSink>> TakeFlushes()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const SessionSettings settings_;
  const std::shared_ptr<const Topology> topology_;
  const uint64_t incarnation_;
  const size_t watch_history_;

  mutable absl::Mutex mu_;
  const std::unique_ptr<Engine> engine_ ABSL_PT_GUARDED_BY(mu_);
  absl::Status closed_ ABSL_GUARDED_BY(mu_);  // OK while open
  uint64_t events_accepted_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t events_rejected_ ABSL_GUARDED_BY(mu_) = 0;
  RejectionCounts rejections_ ABSL_GUARDED_BY(mu_) = {};
  v1::CollectorLosses collector_losses_ ABSL_GUARDED_BY(mu_);
  // The sequence of the latest change (0: none yet).
  uint64_t last_sequence_ ABSL_GUARDED_BY(mu_) = 0;
  // The latest changes, at most watch_history_, oldest first.
  std::deque<v1::PreferenceChange> history_ ABSL_GUARDED_BY(mu_);
  std::vector<Watcher> watchers_ ABSL_GUARDED_BY(mu_);
  std::vector<ScanWatcher> scan_watchers_ ABSL_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<StreamSink>> to_flush_ ABSL_GUARDED_BY(mu_);
};

}  // namespace schedcache

#endif  // SCHEDCACHE_SERVER_SESSION_H_
