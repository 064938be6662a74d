// `schedcache report`: a session's per-policy statistics, its agreement
// with the kernel when it took kernel decisions, and its named cache
// groups' runtime on each policy's preferred LLC when samples named some.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/service_verb_support.h"
#include "cli/verb.h"

namespace schedcache::cli {
namespace {

constexpr absl::string_view kVerb = "report";

class ReportVerb : public Verb {
 public:
  absl::string_view summary() const override {
    return "show a session's per-policy scan cost and agreement, and its "
           "cache groups' runtime on the preferred LLC";
  }

  // PrintVsKernel shows each policy's agreement with the running kernel at
  // its scans (docs/MODEL.md), for a session that took kernel decisions.
  static void PrintVsKernel(const v1::Report& report, int width,
                            std::ostream& out) {
    out << absl::StrFormat(
        "kernel: %d decisions, %d for untracked processes\n"
        "%-*s %-12s %-8s %-10s %s\n",
        report.kernel_decisions_applied(), report.kernel_decisions_unmatched(),
        width, "POLICY", "KERNEL_SCANS", "SCANS", "AGREEMENTS", "AGREEMENT");
    for (const v1::PolicyReport& policy : report.policies()) {
      out << absl::StrFormat(
          "%-*s %-12d %-8d %-10d %s\n", width, policy.policy(),
          policy.kernel_scans(), policy.kernel_process_scans(),
          policy.kernel_agreements(),
          policy.has_kernel_agreement()
              ? absl::StrFormat("%.3f", policy.kernel_agreement())
              : std::string("-"));
    }
  }

  // PrintCacheGroups shows each named cache group's runtime and, per
  // policy, the share of it on the LLC the policy preferred for the group
  // (docs/MODEL.md, Cache groups), for a session whose samples named one.
  static void PrintCacheGroups(const v1::Report& report, std::ostream& out) {
    out << absl::StrFormat(
        "cache groups: %d, %d ended ones left out; share of each group's "
        "runtime on each policy's preferred LLC\n",
        report.cache_groups_size(), report.cache_groups_left_out());
    int id_width = 5;  // "GROUP"
    for (const v1::CacheGroupRuntime& group : report.cache_groups()) {
      id_width = std::max<int>(id_width, absl::StrCat(group.id()).size());
    }
    out << absl::StrFormat("%-*s %-14s", id_width, "GROUP", "RUNTIME_NS");
    // A policy's column is as wide as its name, and at least "0.000".
    std::vector<int> widths;
    for (const v1::PolicyReport& policy : report.policies()) {
      widths.push_back(std::max<int>(5, policy.policy().size()));
      out << absl::StrFormat(" %-*s", widths.back(), policy.policy());
    }
    out << "\n";
    for (const v1::CacheGroupRuntime& group : report.cache_groups()) {
      out << absl::StrFormat("%-*d %-14d", id_width, group.id(),
                             group.runtime_ns());
      for (int p = 0; p < report.policies_size(); ++p) {
        const std::string share =
            group.runtime_ns() <= 0 ||
                    p >= group.runtime_on_preferred_llc_ns_size()
                ? std::string("-")
                : absl::StrFormat(
                      "%.3f",
                      static_cast<double>(group.runtime_on_preferred_llc_ns(p)) /
                          static_cast<double>(group.runtime_ns()));
        out << absl::StrFormat(" %-*s", widths[p], share);
      }
      out << "\n";
    }
  }

  void DefineFlags(FlagSet& flags) override {
    common_.DefineServer(flags);
    common_.DefineSession(flags);
    common_.DefineFormat(flags);
  }

  int Run(const std::vector<std::string>&, std::ostream& out,
          std::ostream& err) override {
    absl::StatusOr<std::unique_ptr<client::Client>> client = Connect(common_);
    if (!client.ok()) return Fail(kVerb, client.status(), err);
    absl::StatusOr<v1::Report> report = (*client)->GetReport(common_.session);
    if (!report.ok()) return Fail(kVerb, report.status(), err);
    if (common_.json()) {
      const absl::Status printed = PrintJson(*report, out);
      return printed.ok() ? kExitOk : Fail(kVerb, printed, err);
    }
    out << absl::StrFormat(
        "session %s: %d samples, %d hand-overs, %d process exits, %d "
        "rejected; %d processes tracked, %d evicted\n",
        report->session(), report->samples_applied(),
        report->handovers_applied(), report->process_exits_applied(),
        report->events_rejected(), report->processes_tracked(),
        report->processes_evicted());
    const v1::CollectorLosses& losses = report->collector_losses();
    out << absl::StrFormat(
        "collector losses: %d ring buffer, %d unparsed, %d late\n",
        losses.ring_buffer_lost(), losses.unparsed(), losses.late());
    const int width = NameColumnWidth(
        "POLICY", report->policies(),
        [](const v1::PolicyReport& p) -> const std::string& {
          return p.policy();
        });
    out << absl::StrFormat(
        "%-*s %-8s %-30s %-8s %-18s %-10s %-10s %-8s %s\n", width, "POLICY",
        "SCANS",
        "CPUS SCANNED mean/p50/p99/max", "LLCS", "SCAN_NS mean/p99",
        "DECISIONS", "AGREEMENT", "CHANGES", "ON_PREFERRED");
    for (const v1::PolicyReport& policy : report->policies()) {
      const v1::Distribution& cpus = policy.cpus_scanned();
      out << absl::StrFormat(
          "%-*s %-8d %-30s %-8.1f %-18s %-10d %-10s %-8d %.3f\n", width,
          policy.policy(), policy.scans(),
          absl::StrFormat("%.1f/%d/%d/%d", cpus.mean(), cpus.p50(), cpus.p99(),
                          cpus.max()),
          policy.llcs_scanned().mean(),
          absl::StrFormat("%.0f/%d", policy.scan_ns().mean(),
                          policy.scan_ns().p99()),
          policy.decisions(),
          policy.has_agreement() ? absl::StrFormat("%.3f", policy.agreement())
                                 : std::string("-"),
          policy.preferred_llc_changes(), policy.runtime_on_preferred_llc());
    }
    if (report->kernel_decisions_applied() > 0) PrintVsKernel(*report, width, out);
    if (report->cache_groups_size() > 0 || report->cache_groups_left_out() > 0) {
      PrintCacheGroups(*report, out);
    }
    return kExitOk;
  }

 private:
  CommonFlags common_;
};

}  // namespace

std::unique_ptr<Verb> MakeReportVerb() { return std::make_unique<ReportVerb>(); }

}  // namespace schedcache::cli
