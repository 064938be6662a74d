#include "topology/xml_reader_wire.h"

#include <climits>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace schedcache::xml_reader_wire {
namespace {

// An answer starts with 1 for a spec, 0 for an error.
constexpr uint64_t kSpecAnswer = 1;
constexpr uint64_t kErrorAnswer = 0;

class Writer {
 public:
  void Number(uint64_t value) {
    for (int byte = 0; byte < 8; ++byte) {
      bytes_.push_back(static_cast<char>((value >> (8 * byte)) & 0xff));
    }
  }
  void Signed(int64_t value) { Number(static_cast<uint64_t>(value)); }
  void Text(absl::string_view text) {
    Number(text.size());
    bytes_.append(text.data(), text.size());
  }
  void Cpus(const CpuSet& cpus) {
    Number(static_cast<uint64_t>(cpus.Count()));
    cpus.ForEach([&](int cpu) { Signed(cpu); });
  }
  std::string Take() && { return std::move(bytes_); }

 private:
  std::string bytes_;
};

// Reader reads what Writer wrote. Each method returns false, and leaves the
// offset where the value should have been, when the bytes end first or the
// value is out of range.
class Reader {
 public:
  explicit Reader(absl::string_view bytes) : bytes_(bytes) {}

  bool Number(uint64_t* value) {
    if (bytes_.size() - at_ < 8) return false;
    uint64_t read = 0;
    for (int byte = 0; byte < 8; ++byte) {
      read |= uint64_t{static_cast<unsigned char>(bytes_[at_ + byte])}
              << (8 * byte);
    }
    at_ += 8;
    *value = read;
    return true;
  }
  bool Signed(int64_t* value) {
    uint64_t raw = 0;
    if (!Number(&raw)) return false;
    *value = static_cast<int64_t>(raw);
    return true;
  }
  bool Int(int* value, int64_t min) {
    int64_t raw = 0;
    const size_t start = at_;
    if (!Signed(&raw)) return false;
    if (raw < min || raw > INT_MAX) {
      at_ = start;
      return false;
    }
    *value = static_cast<int>(raw);
    return true;
  }
  bool Text(std::string* text) {
    uint64_t size = 0;
    const size_t start = at_;
    if (!Number(&size)) return false;
    if (size > bytes_.size() - at_) {
      at_ = start;
      return false;
    }
    text->assign(bytes_.data() + at_, size);
    at_ += size;
    return true;
  }
  // Count reads a count of items of at least `item_bytes` each, which must
  // all fit in what is left.
  bool Count(uint64_t* count, size_t item_bytes) {
    const size_t start = at_;
    if (!Number(count)) return false;
    if (*count > (bytes_.size() - at_) / item_bytes) {
      at_ = start;
      return false;
    }
    return true;
  }
  bool Cpus(CpuSet* cpus) {
    uint64_t count = 0;
    if (!Count(&count, 8)) return false;
    for (uint64_t i = 0; i < count; ++i) {
      int cpu = 0;
      if (!Int(&cpu, 0)) return false;
      cpus->Set(cpu);
    }
    return true;
  }
  bool AtEnd() const { return at_ == bytes_.size(); }
  size_t offset() const { return at_; }

 private:
  absl::string_view bytes_;
  size_t at_ = 0;
};

bool ReadCpu(Reader& in, CpuSpec* cpu) {
  return in.Int(&cpu->os_index, 0) && in.Int(&cpu->core, INT_MIN) &&
         in.Int(&cpu->package, INT_MIN) && in.Int(&cpu->numa_node, INT_MIN);
}

bool ReadCache(Reader& in, CacheSpec* cache) {
  return in.Int(&cache->level, INT_MIN) && in.Signed(&cache->size_bytes) &&
         in.Cpus(&cache->cpus);
}

bool ReadSpec(Reader& in, TopologySpec* spec) {
  uint64_t count = 0;
  if (!in.Text(&spec->source) || !in.Count(&count, 4 * 8)) return false;
  spec->cpus.resize(count);
  for (CpuSpec& cpu : spec->cpus) {
    if (!ReadCpu(in, &cpu)) return false;
  }
  if (!in.Count(&count, 3 * 8)) return false;
  spec->llcs.resize(count);
  for (CacheSpec& cache : spec->llcs) {
    if (!ReadCache(in, &cache)) return false;
  }
  return in.Cpus(&spec->online);
}

}  // namespace

std::string EncodeRequest(const Request& request) {
  Writer out;
  out.Text(request.name);
  out.Signed(request.limits.max_cpus);
  out.Text(request.limits.how_to_raise);
  out.Text(request.xml);
  return std::move(out).Take();
}

absl::StatusOr<Request> DecodeRequest(absl::string_view bytes) {
  Reader in(bytes);
  Request request;
  if (!in.Text(&request.name) || !in.Signed(&request.limits.max_cpus) ||
      !in.Text(&request.limits.how_to_raise) || !in.Text(&request.xml) ||
      !in.AtEnd()) {
    return absl::InvalidArgumentError(
        absl::StrCat("XML reader request of ", bytes.size(),
                     " bytes is malformed at byte ", in.offset()));
  }
  return request;
}

std::string EncodeAnswer(const absl::StatusOr<TopologySpec>& answer) {
  Writer out;
  if (!answer.ok()) {
    out.Number(kErrorAnswer);
    out.Number(static_cast<uint64_t>(answer.status().code()));
    out.Text(answer.status().message());
    return std::move(out).Take();
  }
  const TopologySpec& spec = *answer;
  out.Number(kSpecAnswer);
  out.Text(spec.source);
  out.Number(spec.cpus.size());
  for (const CpuSpec& cpu : spec.cpus) {
    out.Signed(cpu.os_index);
    out.Signed(cpu.core);
    out.Signed(cpu.package);
    out.Signed(cpu.numa_node);
  }
  out.Number(spec.llcs.size());
  for (const CacheSpec& cache : spec.llcs) {
    out.Signed(cache.level);
    out.Signed(cache.size_bytes);
    out.Cpus(cache.cpus);
  }
  out.Cpus(spec.online);
  return std::move(out).Take();
}

absl::StatusOr<TopologySpec> DecodeAnswer(absl::string_view bytes) {
  Reader in(bytes);
  const auto malformed = [&] {
    return absl::InternalError(
        absl::StrCat("the XML reader's answer of ", bytes.size(),
                     " bytes is malformed at byte ", in.offset()));
  };
  uint64_t kind = 0;
  if (!in.Number(&kind)) return malformed();
  if (kind == kErrorAnswer) {
    uint64_t code = 0;
    std::string message;
    if (!in.Number(&code) || code == 0 ||
        code > static_cast<uint64_t>(absl::StatusCode::kUnauthenticated) ||
        !in.Text(&message) || !in.AtEnd()) {
      return malformed();
    }
    return absl::Status(static_cast<absl::StatusCode>(code), message);
  }
  TopologySpec spec;
  if (kind != kSpecAnswer || !ReadSpec(in, &spec) || !in.AtEnd()) {
    return malformed();
  }
  return spec;
}

}  // namespace schedcache::xml_reader_wire
