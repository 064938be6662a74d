#include "eval/ab/ab_command.h"

#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "eval/ab/remote_session.h"
#include "eval/report/scan_trace.h"
#include "eval/report/table_report.h"
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
  ProgressLine progress(err);
  if (command.progress) {
    options.progress = [&progress](const AbProgress& p) { progress.Show(p); };
  }
  absl::StatusOr<AbResult> result = RunAb(options, registry, make_session);
  progress.Done();
  if (!result.ok()) return result.status();
  RETURN_IF_ERROR(WriteTextReport(*result, out));
  RETURN_IF_ERROR(WriteReportFiles(*result, command.files));
  for (const std::string* path :
       {&command.files.json, &command.files.csv, &command.files.html}) {
    if (!path->empty()) err << "wrote " << *path << "\n";
  }
  if (!options.scan_trace.empty()) {
    for (const std::string& policy : options.session.policies) {
      err << "wrote " << ScanTracePath(options.scan_trace, policy) << "\n";
    }
  }
  return absl::OkStatus();
}

}  // namespace schedcache::ab
