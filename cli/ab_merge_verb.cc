// `schedcache ab-merge`: the shard results of `ab --inputs-file LIST
// --shard K/N` combined into the report one unsharded run prints and
// writes; flag parsing only, the work is schedcache::ab's.
#include <memory>

#include "cli/verb.h"
#include "eval/ab/ab_merge_command.h"

namespace schedcache::cli {
namespace {

class AbMergeVerb : public Verb {
 public:
  absl::string_view summary() const override {
    return "merge the shard results of `ab --shard K/N` into one report";
  }
  absl::string_view positional_usage() const override {
    return "SHARD.json...";
  }

  void DefineFlags(FlagSet& flags) override {
    flags.AddString("--json", "FILE",
                    "write the merged result as JSON (an AbReport message)",
                    &files_.json);
    flags.AddString("--csv", "FILE", "write the policy table as CSV",
                    &files_.csv);
    flags.AddString("--cache-groups-csv", "FILE",
                    "write the cache-group table as CSV, one row per group "
                    "(only the header when no input named a group)",
                    &files_.cache_groups_csv);
    flags.AddString("--html", "FILE", "write a self-contained HTML report",
                    &files_.html);
  }

  int Run(const std::vector<std::string>& positional, std::ostream& out,
          std::ostream& err) override {
    if (positional.empty()) {
      err << "schedcache ab-merge: give the shard result files, every shard "
             "of one run\n";
      return kExitUsage;
    }
    const absl::Status status =
        ab::RunAbMergeCommand(positional, files_, out, err);
    if (!status.ok()) {
      err << "schedcache ab-merge: " << status << "\n";
      return kExitError;
    }
    return kExitOk;
  }

 private:
  ab::ReportFiles files_;
};

}  // namespace

std::unique_ptr<Verb> MakeAbMergeVerb() {
  return std::make_unique<AbMergeVerb>();
}

}  // namespace schedcache::cli
