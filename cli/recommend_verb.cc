// `schedcache recommend --tgid N`: every policy's preferred LLC for a
// process, the evidence and the cost.
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/service_verb_support.h"
#include "cli/verb.h"

namespace schedcache::cli {
namespace {

constexpr absl::string_view kVerb = "recommend";

std::string Occupancy(const v1::PolicyDecision& decision) {
  return absl::StrJoin(decision.llc_occupancy(), " ",
                       [](std::string* out, const v1::LlcOccupancy& llc) {
                         absl::StrAppend(out, llc.llc(), ":", llc.occupancy());
                       });
}

class RecommendVerb : public Verb {
 public:
  absl::string_view summary() const override {
    return "show each policy's preferred LLC for a process, and its cost";
  }

  void DefineFlags(FlagSet& flags) override {
    common_.DefineServer(flags);
    common_.DefineSession(flags);
    common_.DefineFormat(flags);
    flags.AddInt64("--tgid", "N", "the process (required)", &tgid_);
    flags.AddInt64("--tid", "T", "a thread of it (-1: none)", &tid_);
    flags.AddInt64("--cpu", "C", "the CPU that thread runs on (-1: its last)",
                   &cpu_);
    flags.AddBool("--scan", "run a fresh scan first", &scan_);
  }

  int Run(const std::vector<std::string>&, std::ostream& out,
          std::ostream& err) override {
    if (tgid_ <= 0) return Usage(kVerb, "--tgid N (> 0) is required", err);
    if (cpu_ >= 0 && tid_ < 0) return Usage(kVerb, "--cpu needs --tid", err);
    v1::RecommendRequest request;
    request.set_session(common_.session);
    request.set_tgid(static_cast<int32_t>(tgid_));
    if (tid_ >= 0) request.set_tid(static_cast<int32_t>(tid_));
    if (cpu_ >= 0) request.set_cpu(static_cast<int32_t>(cpu_));
    request.set_scan(scan_);
    absl::StatusOr<std::unique_ptr<client::Client>> client = Connect(common_);
    if (!client.ok()) return Fail(kVerb, client.status(), err);
    absl::StatusOr<v1::RecommendResponse> response =
        (*client)->Recommend(request);
    if (!response.ok()) return Fail(kVerb, response.status(), err);
    if (common_.json()) {
      const absl::Status printed = PrintJson(*response, out);
      return printed.ok() ? kExitOk : Fail(kVerb, printed, err);
    }
    // CPUS, LLCS and SCAN_NS are the cost of the last executed scan; SCAN
    // says whether it ran for this request ("now") or earlier ("last").
    const int width = NameColumnWidth(
        "POLICY", response->decisions(),
        [](const v1::PolicyDecision& d) -> const std::string& {
          return d.policy();
        });
    out << absl::StrFormat("%-*s %-4s %-4s %-20s %-5s %-6s %-6s %-9s %s\n",
                           width, "POLICY", "LLC", "CPU", "REASON", "SCAN", "CPUS",
                           "LLCS", "SCAN_NS", "OCCUPANCY(LLC:NICE_0_LOAD)");
    for (const v1::PolicyDecision& decision : response->decisions()) {
      out << absl::StrFormat(
          "%-*s %-4s %-4s %-20s %-5s %-6d %-6d %-9d %s\n", width,
          decision.policy(),
          LlcName(decision.preferred_llc()), LlcName(decision.preferred_cpu()),
          decision.reason() == v1::NO_PREFERENCE_REASON_UNSPECIFIED
              ? "-"
              : ReasonText(decision.reason()),
          decision.scanned_now() ? "now" : "last",
          decision.cost().cpus_scanned(), decision.cost().llcs_scanned(),
          decision.cost().scan_ns(), Occupancy(decision));
    }
    return kExitOk;
  }

 private:
  CommonFlags common_;
  int64_t tgid_ = 0;
  int64_t tid_ = -1;
  int64_t cpu_ = -1;
  bool scan_ = false;
};

}  // namespace

std::unique_ptr<Verb> MakeRecommendVerb() {
  return std::make_unique<RecommendVerb>();
}

}  // namespace schedcache::cli
