// What the fuzz targets (the *_fuzzer.cc files, built with SCHEDCACHE_FUZZ)
// share: the topology they model, ValueOrAbort, and FUZZ_CHECK, how a
// target reports a broken promise of the code under test. libFuzzer treats
// an abort as a crash and saves the input, so a failed check prints what
// was expected and the values seen, then aborts. Only fuzz targets use it:
// on the project's own paths bad input is an absl::Status, never an abort.
#ifndef SCHEDCACHE_COMMON_FUZZING_H_
#define SCHEDCACHE_COMMON_FUZZING_H_

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "absl/status/statusor.h"

namespace schedcache {

// kFuzzTopology is the machine of the targets that apply events: two LLCs
// of 2 cores x 2 threads in one NUMA node, so the cache-aware policies scan
// (enable = auto needs 2 LLCs in a node) and SMT is in play.
inline constexpr char kFuzzTopology[] = "synthetic:pack:1 l3:2 core:2 pu:2";

}  // namespace schedcache

// FUZZ_CHECK(condition, message) aborts when `condition` is false, printing
// `message` (anything a std::string can be built from, e.g. absl::StrCat),
// which is evaluated only then.
#define FUZZ_CHECK(condition, message)                                     \
  do {                                                                     \
    if (!(condition)) {                                                    \
      const std::string fuzz_check_message_(message);                      \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: %s\n", __FILE__, \
                   __LINE__, #condition, fuzz_check_message_.c_str());     \
      std::abort();                                                        \
    }                                                                      \
  } while (false)

namespace schedcache {

// ValueOrAbort returns the value of what a target builds once to run on (a
// topology, a registry); an error there is a broken target, not a finding
// about the input.
template <typename T>
T ValueOrAbort(absl::StatusOr<T> value) {
  FUZZ_CHECK(value.ok(), value.status().ToString());
  return *std::move(value);
}

}  // namespace schedcache

#endif  // SCHEDCACHE_COMMON_FUZZING_H_
