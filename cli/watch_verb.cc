// `schedcache watch`: print a session's preferred-LLC changes as they
// happen (optionally after a snapshot of every current preference), until
// the session is deleted, the server stops, or --count changes were
// printed.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "cli/service_verb_support.h"
#include "cli/verb.h"

namespace schedcache::cli {
namespace {

constexpr absl::string_view kVerb = "watch";

// PrintRow prints a change or snapshot entry as a table row.
void PrintRow(const v1::PreferenceChange& change, std::ostream& out) {
  std::string note;
  if (change.snapshot()) note = "  (snapshot)";
  if (change.missed_before() != 0) {
    note = absl::StrFormat("  (%d missed before)", change.missed_before());
  }
  const std::string reason =
      change.new_llc() >= 0 ? "-" : ReasonText(change.reason());
  out << absl::StrFormat("%-20d %-10d %-14s %-4s %-4s %-4s %-8d %s%s\n",
                         change.timestamp_ns(), change.tgid(), change.policy(),
                         change.snapshot() ? "" : LlcName(change.old_llc()),
                         LlcName(change.new_llc()), LlcName(change.new_cpu()),
                         change.sequence(), reason, note);
}

// PrintTable prints one message of the stream for people: changes as rows,
// the snapshot's start and Synced as '#' lines.
void PrintTable(const v1::WatchPreferencesResponse& event, std::ostream& out) {
  if (event.has_change()) {
    PrintRow(event.change(), out);
  } else if (event.has_snapshot_start()) {
    const v1::SnapshotStart& start = event.snapshot_start();
    absl::string_view cause = v1::SnapshotCause_Name(start.cause());
    absl::ConsumePrefix(&cause, "SNAPSHOT_CAUSE_");
    out << absl::StrFormat("# snapshot of %d entries (%s), incarnation %d\n",
                           start.entries(), absl::AsciiStrToLower(cause),
                           start.incarnation());
  } else if (event.has_synced()) {
    out << absl::StrFormat("# synced at sequence %d, incarnation %d\n",
                           event.synced().sequence(),
                           event.synced().incarnation());
  }
}

class WatchVerb : public Verb {
 public:
  absl::string_view summary() const override {
    return "stream a session's preferred-LLC changes";
  }

  void DefineFlags(FlagSet& flags) override {
    common_.DefineServer(flags);
    common_.DefineSession(flags);
    common_.DefineFormat(flags);
    flags.AddInt64("--count", "N",
                   "stop after N changes, snapshot entries not counted (0: "
                   "never)",
                   &count_);
    flags.AddBool("--snapshot",
                  "start with every current preference, then the changes",
                  &options_.snapshot);
    flags.AddString("--policy", "NAME", "only this policy's changes",
                    &options_.policy);
    flags.AddRepeated("--tgid", "N", "only this process's changes; repeatable",
                      &tgids_);
    flags.AddBool("--reconnect",
                  "when the server stops or restarts, reconnect and resume "
                  "(a restarted server's session sends a fresh snapshot)",
                  &options_.reconnect);
  }

  int Run(const std::vector<std::string>&, std::ostream& out,
          std::ostream& err) override {
    if (count_ < 0) return Usage(kVerb, "--count must be >= 0", err);
    for (const std::string& text : tgids_) {
      int32_t tgid = 0;
      if (!absl::SimpleAtoi(text, &tgid) || tgid <= 0) {
        return Usage(kVerb,
                     absl::StrCat("--tgid \"", text, "\" is not a number > 0"),
                     err);
      }
      options_.tgids.push_back(tgid);
    }
    absl::StatusOr<std::unique_ptr<client::Client>> client = Connect(common_);
    if (!client.ok()) return Fail(kVerb, client.status(), err);
    std::unique_ptr<client::PreferenceWatch> watch =
        (*client)->Watch(common_.session, options_);
    // The header says the watch is attached; a refused one prints only its
    // error.
    if (!watch->attached() && !options_.reconnect) {
      watch->Next();  // nullopt: the stream already ended
      return Fail(kVerb, watch->Finish(), err);
    }
    if (!common_.json()) {
      out << absl::StrFormat("%-20s %-10s %-14s %-4s %-4s %-4s %-8s %s\n",
                             "TIMESTAMP_NS", "TGID", "POLICY", "OLD", "NEW",
                             "CPU", "SEQ", "REASON")
          << std::flush;
    }
    int64_t changes = 0;
    while (count_ == 0 || changes < count_) {
      std::optional<v1::WatchPreferencesResponse> event = watch->Next();
      if (!event.has_value()) return Fail(kVerb, watch->Finish(), err);
      if (common_.json()) {
        const absl::Status printed = PrintJson(*event, out);
        if (!printed.ok()) return Fail(kVerb, printed, err);
      } else {
        PrintTable(*event, out);
      }
      out << std::flush;
      if (event->has_change() && !event->change().snapshot()) ++changes;
    }
    return kExitOk;
  }

 private:
  CommonFlags common_;
  int64_t count_ = 0;
  std::vector<std::string> tgids_;
  client::WatchOptions options_;
};

}  // namespace

std::unique_ptr<Verb> MakeWatchVerb() { return std::make_unique<WatchVerb>(); }

}  // namespace schedcache::cli
