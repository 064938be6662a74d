// `schedcache watch`: print every preferred-LLC change of a session as it
// happens, until the session is deleted or the server stops.
#include <memory>

#include "absl/strings/str_format.h"
#include "client/cli/service_verb_support.h"
#include "client/cli/verb.h"

namespace schedcache::cli {
namespace {

constexpr absl::string_view kVerb = "watch";

class WatchVerb : public Verb {
 public:
  absl::string_view summary() const override {
    return "stream a session's preferred-LLC changes";
  }

  void DefineFlags(FlagSet& flags) override {
    common_.DefineServer(flags);
    common_.DefineSession(flags);
    common_.DefineFormat(flags);
    flags.AddInt64("--count", "N", "stop after N changes (0: never)", &count_);
  }

  int Run(const std::vector<std::string>&, std::ostream& out,
          std::ostream& err) override {
    if (count_ < 0) return Usage(kVerb, "--count must be >= 0", err);
    absl::StatusOr<std::unique_ptr<client::Client>> client = Connect(common_);
    if (!client.ok()) return Fail(kVerb, client.status(), err);
    std::unique_ptr<client::PreferenceWatch> watch =
        (*client)->Watch(common_.session);
    // The header says the watch is attached; a refused one prints only its
    // error.
    if (!watch->attached()) {
      watch->Next();  // nullopt: the stream already ended
      return Fail(kVerb, watch->Finish(), err);
    }
    if (!common_.json()) {
      out << absl::StrFormat("%-20s %-10s %-14s %-4s %-4s\n", "TIMESTAMP_NS",
                             "TGID", "POLICY", "OLD", "NEW")
          << std::flush;
    }
    for (int64_t seen = 0; count_ == 0 || seen < count_; ++seen) {
      std::optional<v1::PreferenceChange> change = watch->Next();
      if (!change.has_value()) {
        absl::Status status = watch->Finish();
        return status.ok() ? kExitOk : Fail(kVerb, status, err);
      }
      if (common_.json()) {
        PrintJson(*change, out);
      } else {
        out << absl::StrFormat("%-20d %-10d %-14s %-4s %-4s%s\n",
                               change->timestamp_ns(), change->tgid(),
                               change->policy(), LlcName(change->old_llc()),
                               LlcName(change->new_llc()),
                               change->missed_before() == 0
                                   ? ""
                                   : absl::StrFormat("  (%d missed before)",
                                                     change->missed_before()));
      }
      out << std::flush;
    }
    return kExitOk;
  }

 private:
  CommonFlags common_;
  int64_t count_ = 0;
};

}  // namespace

std::unique_ptr<Verb> MakeWatchVerb() { return std::make_unique<WatchVerb>(); }

}  // namespace schedcache::cli
