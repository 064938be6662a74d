// AbSession: the backend of an A/B evaluation (`schedcache ab`,
// docs/EVALUATION.md), one session that takes the input's events (it is an
// EventSink), runs every policy on them, and gives back the report. While it
// runs it tells an AbObserver of every preference change and, when the backend
// can see them, of every executed scan. Two implementations: in-process (an
// Engine, see in_process_session.h) and remote (a schedcached session over
// gRPC, see remote_session.h).
//
// A session is described by client::SessionSpec, in the terms of
// `schedcache session create`; the same tunable names resolve the same way
// in both backends because both go through the engine's own
// ResolveSessionChoices (policies/session_settings.h): the server from the
// CreateSessionRequest the remote backend sends, the in-process backend
// directly.
//
// Thread contract: an AbSession is thread-compatible and calls its observer
// from the thread that feeds it (the remote one also from Finish).
#ifndef SCHEDCACHE_EVAL_AB_AB_SESSION_H_
#define SCHEDCACHE_EVAL_AB_AB_SESSION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "events/event_sink.h"
#include "policies/engine.h"
#include "schedcache/session_request.h"
#include "schedcache/v1/schedcache.pb.h"

namespace schedcache::ab {

// AbObserver receives what a session reports as it happens.
class AbObserver {
 public:
  virtual ~AbObserver() = default;
  virtual void OnScan(const ScanObservation& scan) = 0;
  virtual void OnPreferenceChange(const PreferenceChange& change) = 0;
  // wants_scans is true when the observer needs to hear of every executed
  // scan. A backend for which reporting scans has a cost (a server streams
  // them) reports them only to an observer that wants them.
  virtual bool wants_scans() const { return false; }
};

// DeferredRejection is an event a session refused after it was given (a
// server reports them when the stream ends), named by its position among
// the events given, counting from 0.
struct DeferredRejection {
  uint64_t index = 0;
  std::string reason;
};

// SessionOutcome is what a finished session gives back.
struct SessionOutcome {
  EngineReport report;
  uint64_t deferred_rejections = 0;        // exact count
  std::vector<DeferredRejection> first_deferred;  // the first few, in order
};

// A session is an EventSink whose OnSample/OnHandOver/OnProcessExit return
// InvalidArgument for an event it refuses (the session is then unchanged and
// takes the next event; in-process sessions do), and any other error when it
// cannot go on. A session may instead accept every event and report the
// refused ones from Finish (a server does).
class AbSession : public EventSink {
 public:
  // Finish returns the outcome once every event was given; call once.
  virtual absl::StatusOr<SessionOutcome> Finish() = 0;
  // reports_scans is true when the observer hears of every executed scan
  // (per-scan traces and exact histograms are then available): always in
  // process, and from a server when the observer wants_scans.
  virtual bool reports_scans() const = 0;
  // enabled is false when cache-aware scanning is off in this session
  // (enable=off, or auto on a topology with no node of two LLCs).
  virtual bool enabled() const = 0;
};

}  // namespace schedcache::ab

#endif  // SCHEDCACHE_EVAL_AB_AB_SESSION_H_
