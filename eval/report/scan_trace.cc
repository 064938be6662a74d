#include "eval/report/scan_trace.h"

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace schedcache {
namespace {

// kMaxComm is the kernel's TASK_COMM_LEN - 1: ftrace never prints more.
constexpr size_t kMaxComm = 15;

std::string Header(absl::string_view policy, size_t index, size_t count) {
  return absl::StrFormat(
      "# tracer: nop\n"
      "# schedcache ab: sched_cache_scan events of policy %s (%d of %d);\n"
      "# the other policies are in sibling files named after them.\n"
      "#\n"
      "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
      "#              | |         |   |||||     |         |\n",
      policy, index + 1, count);
}

}  // namespace

std::string ScanTracePath(absl::string_view path, absl::string_view policy) {
  const size_t slash = path.rfind('/');
  const size_t base = slash == absl::string_view::npos ? 0 : slash + 1;
  const size_t dot = path.rfind('.');
  // A leading dot (".scans") names a hidden file, not an extension.
  if (dot == absl::string_view::npos || dot <= base) {
    return absl::StrCat(path, ".", policy);
  }
  return absl::StrCat(path.substr(0, dot), ".", policy, path.substr(dot));
}

std::string FormatScanTraceLine(const ScanEvent& event) {
  const absl::string_view comm = absl::string_view(event.comm).substr(0, kMaxComm);
  // The layout of ftrace's trace_print_context(): "%16s-%-7d [%03d] ", the
  // five latency flags (all clear: "....."), then " %5lu.%06lu: ".
  return absl::StrFormat("%16s-%-7d [%03d] ..... %5d.%06d: sched_cache_scan: "
                         "comm=%s pid=%d scan=%d",
                         comm, event.pid, event.cpu, event.timestamp_ns / 1'000'000'000,
                         event.timestamp_ns % 1'000'000'000 / 1000, comm, event.pid,
                         event.cpus_scanned);
}

absl::StatusOr<ScanTraceWriter> ScanTraceWriter::Open(
    absl::string_view path, const std::vector<std::string>& policies) {
  if (policies.empty()) {
    return absl::InvalidArgumentError("scan trace: no policies");
  }
  absl::flat_hash_set<std::string> seen;
  ScanTraceWriter writer;
  for (size_t i = 0; i < policies.size(); ++i) {
    if (!seen.insert(policies[i]).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("scan trace: policy \"", policies[i], "\" is repeated"));
    }
    std::string file = ScanTracePath(path, policies[i]);
    auto out = std::make_unique<std::ofstream>(file, std::ios::trunc);
    if (!*out) {
      const int error = errno;
      return absl::Status(absl::ErrnoToStatusCode(error),
                          absl::StrCat("scan trace: cannot open ", file, ": ",
                                       std::strerror(error)));
    }
    *out << Header(policies[i], i, policies.size());
    writer.paths_.push_back(std::move(file));
    writer.files_.push_back(std::move(out));
  }
  return writer;
}

absl::Status ScanTraceWriter::Write(const ScanEvent& event) {
  if (event.policy < 0 || static_cast<size_t>(event.policy) >= files_.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "scan trace: ScanEvent.policy %d is not in [0, %d)", event.policy, files_.size()));
  }
  if (event.timestamp_ns < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "scan trace: ScanEvent.timestamp_ns ", event.timestamp_ns, " is negative"));
  }
  std::ofstream& out = *files_[event.policy];
  out << FormatScanTraceLine(event) << '\n';
  if (!out) {
    return absl::DataLossError(absl::StrCat("scan trace: writing ", paths_[event.policy],
                                            " failed"));
  }
  return absl::OkStatus();
}

absl::Status ScanTraceWriter::Close() {
  absl::Status status;
  for (size_t i = 0; i < files_.size(); ++i) {
    files_[i]->close();
    if (!*files_[i] && status.ok()) {
      status = absl::DataLossError(absl::StrCat("scan trace: writing ", paths_[i], " failed"));
    }
  }
  return status;
}

}  // namespace schedcache
