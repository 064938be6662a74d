// CpuSet: the project's cpumask. A dynamic bitset over CPU os indexes.
//
// Indexes may be sparse (POWER numbers its PUs 0,1,8,9,...) and large (more
// than 1024 CPUs). Storage grows to the highest index set. Iteration and the
// set operations work a 64-bit word at a time, never a bit at a time.
//
// Thread contract: thread-compatible (const methods may be called
// concurrently; mutation needs external synchronisation).
#ifndef SCHEDCACHE_TOPOLOGY_CPU_SET_H_
#define SCHEDCACHE_TOPOLOGY_CPU_SET_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace schedcache {

class CpuSet {
 public:
  CpuSet() = default;
  CpuSet(std::initializer_list<int> cpus);

  // FromRange returns the set [first, last]. REQUIRES: 0 <= first <= last.
  static CpuSet FromRange(int first, int last);

  // Parse reads the list form "0-7,192-199" (also "" for the empty set).
  // Returns InvalidArgument naming the text on malformed input.
  static absl::StatusOr<CpuSet> Parse(absl::string_view text);

  // Set/Clear/Test take an os index. REQUIRES: cpu >= 0.
  // Set and Test are inline: every account sets a CPU in the visited mask.
  void Set(int cpu) {
    const size_t word = static_cast<size_t>(cpu) / kWordBits;
    if (word >= words_.size()) words_.resize(word + 1, 0);
    words_[word] |= uint64_t{1} << (cpu % kWordBits);
  }
  void Clear(int cpu);
  bool Test(int cpu) const {
    if (cpu < 0) return false;
    const size_t word = static_cast<size_t>(cpu) / kWordBits;
    return word < words_.size() && (words_[word] >> (cpu % kWordBits)) & 1;
  }

  // Empty and First are inline: a scan calls them once per LLC.
  bool Empty() const { return words_.empty(); }  // Trim keeps no zero tail
  int Count() const;
  // First returns the lowest member, or -1 when the set is empty.
  int First() const {
    for (size_t w = 0; w < words_.size(); ++w) {
      if (words_[w] != 0) {
        return static_cast<int>(w * kWordBits + std::countr_zero(words_[w]));
      }
    }
    return -1;
  }
  // Last returns the highest member, or -1 when the set is empty.
  int Last() const;

  // In-place set algebra.
  CpuSet& operator&=(const CpuSet& other);
  CpuSet& operator|=(const CpuSet& other);
  CpuSet& operator-=(const CpuSet& other);  // difference
  friend CpuSet operator&(CpuSet a, const CpuSet& b) { return a &= b; }
  friend CpuSet operator|(CpuSet a, const CpuSet& b) { return a |= b; }
  friend CpuSet operator-(CpuSet a, const CpuSet& b) { return a -= b; }
  // AssignIntersection makes this set `a & b` in one pass, reusing its own
  // storage (a scan does this once per LLC; `x = a; x &= b` copies first).
  void AssignIntersection(const CpuSet& a, const CpuSet& b);

  bool Intersects(const CpuSet& other) const;
  bool IsSubsetOf(const CpuSet& other) const;
  bool operator==(const CpuSet& other) const;

  // ToString gives the list form, "0-7,192-199"; "" for the empty set.
  std::string ToString() const;
  std::vector<int> ToVector() const;

  // ForEach calls fn(cpu) for every member in increasing order.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (size_t w = 0; w < words_.size(); ++w) {
      uint64_t bits = words_[w];
      while (bits != 0) {
        fn(static_cast<int>(w * kWordBits + std::countr_zero(bits)));
        bits &= bits - 1;
      }
    }
  }

  // ForEachAnd calls fn(cpu) for every member of (*this & other), in
  // increasing order, without building the intersection (the kernel's
  // for_each_cpu_and).
  template <typename Fn>
  void ForEachAnd(const CpuSet& other, Fn&& fn) const {
    const size_t n = std::min(words_.size(), other.words_.size());
    for (size_t w = 0; w < n; ++w) {
      uint64_t bits = words_[w] & other.words_[w];
      while (bits != 0) {
        fn(static_cast<int>(w * kWordBits + std::countr_zero(bits)));
        bits &= bits - 1;
      }
    }
  }

 private:
  static constexpr int kWordBits = 64;

  void Trim();  // drops trailing zero words so equality is structural

  std::vector<uint64_t> words_;
};

}  // namespace schedcache

#endif  // SCHEDCACHE_TOPOLOGY_CPU_SET_H_
