#include "topology/cpu_set.h"

#include <algorithm>
#include <charconv>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace schedcache {
namespace {

// ParseCpuNumber reads one non-negative decimal CPU number, all of `text`.
bool ParseCpuNumber(absl::string_view text, int& out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end && out >= 0;
}

}  // namespace

CpuSet::CpuSet(std::initializer_list<int> cpus) {
  for (int cpu : cpus) Set(cpu);
}

CpuSet CpuSet::FromRange(int first, int last) {
  CpuSet set;
  for (int cpu = first; cpu <= last; ++cpu) set.Set(cpu);
  return set;
}

absl::StatusOr<CpuSet> CpuSet::Parse(absl::string_view text) {
  CpuSet set;
  text = absl::StripAsciiWhitespace(text);
  if (text.empty()) return set;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    part = absl::StripAsciiWhitespace(part);
    std::pair<absl::string_view, absl::string_view> bounds =
        absl::StrSplit(part, absl::MaxSplits('-', 1));
    int first = 0;
    int last = 0;
    const bool is_range = !bounds.second.empty() || absl::EndsWith(part, "-");
    if (!ParseCpuNumber(bounds.first, first) ||
        (is_range && !ParseCpuNumber(bounds.second, last))) {
      return absl::InvalidArgumentError(
          absl::StrCat("cpu list \"", text, "\": bad element \"", part, "\""));
    }
    if (!is_range) last = first;
    if (last < first) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cpu list \"", text, "\": range \"", part, "\" is descending"));
    }
    for (int cpu = first; cpu <= last; ++cpu) set.Set(cpu);
  }
  return set;
}

void CpuSet::Clear(int cpu) {
  const size_t word = static_cast<size_t>(cpu) / kWordBits;
  if (word >= words_.size()) return;
  words_[word] &= ~(uint64_t{1} << (cpu % kWordBits));
  Trim();
}

int CpuSet::Count() const {
  int count = 0;
  for (uint64_t w : words_) count += std::popcount(w);
  return count;
}

int CpuSet::Last() const {
  if (words_.empty()) return -1;  // Trim keeps the last word non-zero
  const size_t w = words_.size() - 1;
  return static_cast<int>(w * kWordBits + kWordBits - 1 -
                          std::countl_zero(words_[w]));
}

CpuSet& CpuSet::operator&=(const CpuSet& other) {
  if (words_.size() > other.words_.size()) words_.resize(other.words_.size());
  for (size_t w = 0; w < words_.size(); ++w) words_[w] &= other.words_[w];
  Trim();
  return *this;
}

void CpuSet::AssignIntersection(const CpuSet& a, const CpuSet& b) {
  words_.resize(std::min(a.words_.size(), b.words_.size()));
  for (size_t w = 0; w < words_.size(); ++w) {
    words_[w] = a.words_[w] & b.words_[w];
  }
  Trim();
}

CpuSet& CpuSet::operator|=(const CpuSet& other) {
  if (words_.size() < other.words_.size()) {
    words_.resize(other.words_.size(), 0);
  }
  for (size_t w = 0; w < other.words_.size(); ++w) words_[w] |= other.words_[w];
  return *this;
}

CpuSet& CpuSet::operator-=(const CpuSet& other) {
  const size_t n = std::min(words_.size(), other.words_.size());
  for (size_t w = 0; w < n; ++w) words_[w] &= ~other.words_[w];
  Trim();
  return *this;
}

bool CpuSet::Intersects(const CpuSet& other) const {
  const size_t n = std::min(words_.size(), other.words_.size());
  for (size_t w = 0; w < n; ++w) {
    if (words_[w] & other.words_[w]) return true;
  }
  return false;
}

bool CpuSet::IsSubsetOf(const CpuSet& other) const {
  for (size_t w = 0; w < words_.size(); ++w) {
    const uint64_t theirs = w < other.words_.size() ? other.words_[w] : 0;
    if (words_[w] & ~theirs) return false;
  }
  return true;
}

bool CpuSet::operator==(const CpuSet& other) const {
  return words_ == other.words_;
}

std::string CpuSet::ToString() const {
  std::string out;
  int run_start = -1;
  int run_end = -1;
  auto flush = [&] {
    if (run_start < 0) return;
    if (!out.empty()) out += ',';
    absl::StrAppend(&out, run_start);
    if (run_end > run_start) absl::StrAppend(&out, "-", run_end);
  };
  ForEach([&](int cpu) {
    if (cpu == run_end + 1 && run_start >= 0) {
      run_end = cpu;
      return;
    }
    flush();
    run_start = run_end = cpu;
  });
  flush();
  return out;
}

std::vector<int> CpuSet::ToVector() const {
  std::vector<int> cpus;
  cpus.reserve(Count());
  ForEach([&](int cpu) { cpus.push_back(cpu); });
  return cpus;
}

void CpuSet::Trim() {
  while (!words_.empty() && words_.back() == 0) words_.pop_back();
}

}  // namespace schedcache
