#include "eval/ab/testing/comparable_report.h"

#include <sstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "eval/ab/ab_report.h"

namespace schedcache::ab {

AbResult WithoutScanTimes(AbResult result) {
  for (PolicyResult& policy : result.policies) policy.report.scan_ns = {};
  return result;
}

std::string ComparableJson(AbResult result) {
  std::ostringstream out;
  const absl::Status written =
      WriteJson(AbResultToProto(WithoutScanTimes(std::move(result))), out);
  if (!written.ok()) {
    return absl::StrCat("JSON report failed: ", written.ToString());
  }
  return out.str();
}

}  // namespace schedcache::ab
