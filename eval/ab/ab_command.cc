#include "eval/ab/ab_command.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "eval/ab/ab_merge.h"
#include "eval/ab/remote_session.h"
#include "eval/ab/shard_result.h"
#include "eval/report/scan_trace.h"
#include "policies/builtin_policies.h"

namespace schedcache::ab {
namespace {

// ProgressLine redraws one line in place; Done clears it.
class ProgressLine {
 public:
  explicit ProgressLine(std::ostream& err) : err_(err) {}
  void Show(const AbProgress& p) {
    err_ << absl::StrFormat("\r%.2fM events, %.3f s of input", p.events / 1e6,
                            p.input_ns / 1e9)
         << std::flush;
    shown_ = true;
  }
  void Done() {
    if (shown_) err_ << "\r\033[K" << std::flush;
    shown_ = false;
  }

 private:
  std::ostream& err_;
  bool shown_ = false;
};

// WorkloadFlags is the generator's configuration as one string, so shards
// run with different workload flags are told apart.
std::string WorkloadFlags(const WorkloadOptions& w) {
  return absl::StrCat("seed=", w.seed, " duration_ns=", w.duration_ns,
                      " instances=", w.instances,
                      " server_threads=", w.server_threads,
                      " client_threads=", w.client_threads,
                      " groups=", w.groups, " fds=", w.fds,
                      " spill_probability=", w.spill_probability);
}

ShardConfig ConfigOf(const AbCommand& command) {
  const AbOptions& o = command.options;
  return ShardConfig{.topology = o.session.topology,
                     .policies = o.session.policies,
                     .trigger = o.session.trigger,
                     .settings = o.session.settings,
                     .hz = o.hz,
                     .cpu_map = command.cpu_map,
                     .workload = WorkloadFlags(o.workload)};
}

// RunList runs the list's inputs (only the shard's, with a shard), one
// session each, in list order.
absl::StatusOr<ShardResult> RunList(const AbCommand& command,
                                    const AbOptions& options,
                                    const PolicyRegistry& registry,
                                    const SessionMaker& make_session,
                                    std::ostream& err) {
  ASSIGN_OR_RETURN(const InputList list, ReadInputList(command.inputs_file));
  for (const std::string& rejected : list.rejected) {
    err << "schedcache ab: skipped " << rejected << "\n";
  }
  ShardResult shard;
  shard.shard = command.shard.value_or(ShardSpec{});
  shard.config = ConfigOf(command);
  shard.entries = list.entries;
  for (const InputListEntry& entry : list.inputs) {
    shard.inputs.push_back(ShardInput{entry.index, entry.text});
    if (!InShard(entry.index, shard.shard)) continue;
    AbOptions one = options;
    one.input = entry.spec;
    absl::StatusOr<AbResult> result = RunAb(one, registry, make_session);
    if (!result.ok()) {
      return absl::Status(
          result.status().code(),
          absl::StrCat(command.inputs_file, ":", entry.line, ": ", entry.text,
                       ": ", result.status().message()));
    }
    shard.results.emplace_back(entry.index, *std::move(result));
  }
  return shard;
}

// PublishList prints and writes the merge of `shard`'s results; a shard's
// JSON file is its ShardResult instead.
absl::Status PublishList(const AbCommand& command, const ShardResult& shard,
                         std::ostream& out, std::ostream& err) {
  ReportFiles files = command.files;
  if (command.shard.has_value()) {
    RETURN_IF_ERROR(WriteShardResult(shard, files.json));
    err << "wrote " << files.json << "\n";
    files.json.clear();
  }
  if (shard.results.empty()) {
    err << "schedcache ab: shard " << shard.shard.index << "/"
        << shard.shard.count << " has none of the list's " << shard.entries
        << " entries: no report\n";
    return absl::OkStatus();
  }
  std::vector<AbResult> parts;
  for (const auto& [index, result] : shard.results) parts.push_back(result);
  ASSIGN_OR_RETURN(const AbResult merged, MergeAbResults(std::move(parts)));
  return PublishReport(merged, files, out, err);
}

}  // namespace

absl::Status RunAbCommand(const AbCommand& command, std::ostream& out,
                          std::ostream& err) {
  ASSIGN_OR_RETURN(const PolicyRegistry registry, BuildPolicyRegistry({}));
  SessionMaker make_session;
  if (command.server.empty()) {
    make_session = InProcessSessions(registry);
  } else {
    make_session = [&command](std::shared_ptr<const Topology>,
                              const client::SessionSpec& config,
                              AbObserver& observer) {
      return MakeRemoteSession(command.server, config, observer);
    };
  }
  AbOptions options = command.options;
  options.last_scans = !command.files.html.empty();
  ProgressLine progress(err);
  if (command.progress) {
    options.progress = [&progress](const AbProgress& p) { progress.Show(p); };
  }
  if (!command.inputs_file.empty()) {
    absl::StatusOr<ShardResult> shard =
        RunList(command, options, registry, make_session, err);
    progress.Done();
    if (!shard.ok()) return shard.status();
    return PublishList(command, *shard, out, err);
  }
  absl::StatusOr<AbResult> result = RunAb(options, registry, make_session);
  progress.Done();
  if (!result.ok()) return result.status();
  RETURN_IF_ERROR(PublishReport(*result, command.files, out, err));
  if (!options.scan_trace.empty()) {
    for (const std::string& policy : options.session.policies) {
      err << "wrote " << ScanTracePath(options.scan_trace, policy) << "\n";
    }
  }
  if (!options.perfetto.empty()) err << "wrote " << options.perfetto << "\n";
  return absl::OkStatus();
}

}  // namespace schedcache::ab
