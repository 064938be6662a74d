// CpuMap renames the CPUs of a trace onto the CPUs of the topology it is
// replayed on, e.g. to replay a 2-CPU recording on a modelled 384-CPU
// machine, or a machine whose CPUs are numbered differently.
//
// Text form (the `--cpu-map` flag): comma-separated entries FROM=TO or
// FROM:TO (the two separators are equivalent), where each side is a CPU
// number `N` or a range `A-B` (A <= B); a range maps element by element onto
// a range of the same length:
//   "0-383:0-383"   identity on 384 CPUs
//   "0=0,1=200"     trace CPU 1 becomes CPU 200
//   "0-15=16-31"    trace CPUs 0..15 become 16..31
// A trace CPU may appear in one entry only, and no two trace CPUs may map
// onto the same CPU (that would merge two CPUs' load). Trace CPUs not named
// map to themselves; replay then rejects any CPU that is not in the
// topology.
//
// Thread contract: immutable after Parse, safe for concurrent access.
#ifndef SCHEDCACHE_TRACE_CPU_MAP_H_
#define SCHEDCACHE_TRACE_CPU_MAP_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace schedcache {

class CpuMap {
 public:
  // kMaxCpu bounds the CPU numbers a map may name.
  static constexpr int kMaxCpu = 1 << 20;

  // The default map is the identity.
  CpuMap() = default;

  // Parse reads the text form above ("" is the identity). Returns
  // InvalidArgument naming the bad entry for a syntax error, ranges of
  // different lengths, a CPU above kMaxCpu, a CPU mapped twice, or two CPUs
  // mapped onto one (the message names both).
  static absl::StatusOr<CpuMap> Parse(absl::string_view text);

  // Map returns the topology CPU of trace CPU `cpu` (>= 0).
  int Map(int cpu) const {
    if (static_cast<size_t>(cpu) < to_.size() && to_[cpu] >= 0) return to_[cpu];
    return cpu;
  }

  bool identity() const { return to_.empty(); }

 private:
  std::vector<int32_t> to_;  // trace CPU -> topology CPU, -1: unnamed
};

}  // namespace schedcache

#endif  // SCHEDCACHE_TRACE_CPU_MAP_H_
