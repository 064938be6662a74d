// `schedcache mirror`: keep the pinned BPF maps of docs/INTEGRATION.md equal to
// one policy's preferences in one session, for a sched_ext scheduler to
// read. The work is bpfmaps/preference_mirror.h's; this verb only connects,
// reads the topology, and feeds it the watch stream.
#include <sys/types.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "api/mirror_convert.h"
#include "bpfmaps/preference_mirror.h"
#include "cli/service_verb_support.h"
#include "cli/stop_signals.h"
#include "cli/verb.h"
#include "common/status_macros.h"

namespace schedcache::cli {
namespace {

constexpr absl::string_view kVerb = "mirror";
constexpr absl::string_view kDefaultPinRoot = "/sys/fs/bpf/schedcache/";

// ParseMode reads an octal file mode of at most 07777 ("0600", "640").
std::optional<mode_t> ParseMode(const std::string& text) {
  if (text.empty() || text.find_first_not_of("01234567") != std::string::npos) {
    return std::nullopt;
  }
  const unsigned long mode = std::strtoul(text.c_str(), nullptr, 8);
  if (mode > 07777) return std::nullopt;
  return static_cast<mode_t>(mode);
}

std::string CountersLine(const PreferenceMirror& mirror) {
  const MirrorCounters& c = mirror.counters();
  return absl::StrCat(
      "changes applied ", c.changes_applied, ", duplicates ",
      c.changes_duplicate, ", snapshots ", c.snapshots, " (resyncs ",
      c.resyncs, "), snapshot size ", c.snapshot_size, ", stale deleted ",
      c.stale_deleted, ", exited ", c.deletes_exited, ", evicted ",
      c.deletes_evicted, ", map-full evictions ", c.map_full_evictions,
      ", failed writes ", mirror.map_counters().failed_writes);
}

class MirrorVerb : public Verb {
 public:
  absl::string_view summary() const override {
    return "keep pinned BPF maps of a policy's preferences for a scheduler";
  }

  void DefineFlags(FlagSet& flags) override {
    common_.DefineServer(flags);
    common_.DefineSession(flags);
    flags.AddString("--policy", "P",
                    "policy to mirror (default: the session's reference, "
                    "its first)",
                    &policy_);
    flags.AddString("--pin-dir", "DIR",
                    "bpffs directory of the maps (default "
                    "/sys/fs/bpf/schedcache/SESSION; missing directories "
                    "are made, a bpffs is never mounted)",
                    &pin_dir_);
    flags.AddString("--map-mode", "MODE",
                    "octal mode of pinned files it creates", &map_mode_);
    flags.AddBool("--once",
                  "write llcs, meta and the snapshot of prefs, then exit",
                  &once_);
    flags.AddBool("--verbose", "print a line per change applied", &verbose_);
  }

  int Run(const std::vector<std::string>&, std::ostream& out,
          std::ostream& err) override {
    const std::optional<mode_t> mode = ParseMode(map_mode_);
    if (!mode.has_value()) {
      return Usage(kVerb,
                   absl::StrCat("--map-mode ", map_mode_,
                                " is not an octal file mode (e.g. 0600)"),
                   err);
    }
    const PinnedMapsOptions map_options{.pin_mode = *mode};
    StopSignals stop;
    absl::StatusOr<std::unique_ptr<client::Client>> client = Connect(common_);
    if (!client.ok()) return Fail(kVerb, client.status(), err);
    absl::StatusOr<PreferenceMirror> mirror = OpenMirror(**client, map_options);
    if (!mirror.ok()) return Fail(kVerb, mirror.status(), err);
    out << absl::StreamFormat(
               "mirroring session %s policy %s into %s (%s maps)\n",
               common_.session, policy_, mirror->dir(),
               mirror->reused() ? "reused" : "new")
        << std::flush;
    // A snapshot first, then every change of the policy; across a server
    // restart the watch reconnects and a new incarnation comes as a fresh
    // snapshot, which replaces what prefs holds.
    client::WatchOptions watch_options;
    watch_options.snapshot = true;
    watch_options.policy = policy_;
    watch_options.reconnect = !once_;
    std::unique_ptr<client::PreferenceWatch> watch =
        (*client)->Watch(common_.session, watch_options);
    stop.Watch([&watch] { watch->Cancel(); });
    const absl::Status status = Follow(*watch, *mirror, out, err);
    stop.Disarm();
    out << "stopped: " << CountersLine(*mirror) << "\n" << std::flush;
    if (stop.signalled()) return kExitOk;
    return status.ok() ? kExitOk : Fail(kVerb, status, err);
  }

 private:
  // OpenMirror checks the policy against the session, resolves the pin
  // directory and writes llcs and meta.
  absl::StatusOr<PreferenceMirror> OpenMirror(
      const client::Client& client, const PinnedMapsOptions& options) {
    absl::StatusOr<v1::Session> session = client.GetSession(common_.session);
    if (!session.ok()) return session.status();
    if (policy_.empty() && session->policies_size() > 0) {
      policy_ = session->policies(0);
    }
    if (std::find(session->policies().begin(), session->policies().end(),
                  policy_) == session->policies().end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--policy ", policy_, " is not a policy of session ",
          common_.session, " (", absl::StrJoin(session->policies(), ", "),
          ")"));
    }
    absl::StatusOr<v1::GetTopologyResponse> topology =
        client.GetTopology(common_.session);
    if (!topology.ok()) return topology.status();
    const std::string dir = pin_dir_.empty()
                                ? absl::StrCat(kDefaultPinRoot, common_.session)
                                : pin_dir_;
    if (absl::Status made = MakePinDirectory(dir); !made.ok()) return made;
    return PreferenceMirror::Open(dir, ToLlcCpuLists(topology->topology()), policy_,
                                  options);
  }

  // Follow applies the stream (snapshot entries, their Synced marker,
  // changes) until it ends, or with --once until the first snapshot is
  // written. A change the maps refuse is reported and skipped; a failed
  // bpf() ends the mirror.
  absl::Status Follow(client::PreferenceWatch& watch, PreferenceMirror& mirror,
                      std::ostream& out, std::ostream& err) {
    bool in_snapshot = false;
    while (std::optional<v1::WatchPreferencesResponse> event = watch.Next()) {
      absl::Status applied = absl::OkStatus();
      if (event->has_snapshot_start()) {
        in_snapshot = true;
        out << absl::StreamFormat(
                   "snapshot of incarnation %016x: %d processes (%s)\n",
                   event->snapshot_start().incarnation(),
                   event->snapshot_start().entries(),
                   v1::SnapshotCause_Name(event->snapshot_start().cause()))
            << std::flush;
      } else if (event->has_synced()) {
        if (in_snapshot) {
          in_snapshot = false;
          applied = mirror.OnSnapshotEnd(
              {.incarnation = event->synced().incarnation(),
               .sequence = event->synced().sequence()});
          out << absl::StreamFormat(
                     "snapshot written at sequence %d; following changes\n",
                     event->synced().sequence())
              << std::flush;
        }
      } else if (event->change().snapshot()) {
        mirror.OnSnapshotEntry(ToMirroredPreference(event->change()));
      } else {
        applied = ApplyChange(event->change(), mirror, out, err);
      }
      if (absl::IsInvalidArgument(applied)) {
        err << "schedcache mirror: " << applied.message() << "\n";
      } else if (!applied.ok()) {
        return applied;
      }
      if (once_ && event->has_synced() && mirror.incarnation() != 0) {
        return absl::OkStatus();
      }
    }
    return watch.Finish();
  }

  // ApplyChange applies one change after the snapshot.
  absl::Status ApplyChange(const v1::PreferenceChange& change,
                           PreferenceMirror& mirror, std::ostream& out,
                           std::ostream& err) {
    if (change.missed_before() > 0) {
      err << "schedcache mirror: the server dropped " << change.missed_before()
          << " changes before this one (--max_watch_queue): prefs may be "
             "stale until those processes change again\n";
    }
    RETURN_IF_ERROR(mirror.OnChange(ToMirroredChange(change)));
    if (verbose_) {
      out << absl::StreamFormat("tgid %d llc %s seq %d\n", change.tgid(),
                                LlcName(change.new_llc()), change.sequence())
          << std::flush;
    }
    return absl::OkStatus();
  }

  CommonFlags common_;
  std::string policy_;
  std::string pin_dir_;
  std::string map_mode_ = "0600";
  bool once_ = false;
  bool verbose_ = false;
};

}  // namespace

std::unique_ptr<Verb> MakeMirrorVerb() {
  return std::make_unique<MirrorVerb>();
}

}  // namespace schedcache::cli
