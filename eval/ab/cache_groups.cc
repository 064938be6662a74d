#include "eval/ab/cache_groups.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "trace/quoted_input.h"

namespace schedcache::ab {
namespace {

// kMaxCommBytes is the longest comm the kernel keeps (TASK_COMM_LEN 16 with
// its NUL), as Comm does.
constexpr size_t kMaxCommBytes = kCommLength - 1;

// Selector is a group file line's process: a tgid, a comm or a cgroup
// path (one of them set).
struct Selector {
  int32_t tgid = 0;
  std::string comm;
  std::string cgroup;
};

bool AllDigits(absl::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return absl::ascii_isdigit(static_cast<unsigned char>(c));
  });
}

// ParseSelector reads `text`: tgid=N, N, comm=NAME or cgroup=PATH.
absl::StatusOr<Selector> ParseSelector(absl::string_view text) {
  absl::string_view value = text;
  if (absl::ConsumePrefix(&value, "cgroup=")) {
    if (!absl::StartsWith(value, "/")) {
      return absl::InvalidArgumentError(absl::StrCat(
          QuoteInput(text),
          ": a cgroup path starts with '/', as /proc/PID/cgroup shows it"));
    }
    return Selector{.tgid = 0, .comm = {}, .cgroup = std::string(value)};
  }
  if (absl::ConsumePrefix(&value, "comm=")) {
    if (value.empty() || value.size() > kMaxCommBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          QuoteInput(text), ": a comm has 1 to ", kMaxCommBytes,
          " bytes (the kernel keeps no more), not ", value.size()));
    }
    return Selector{.tgid = 0, .comm = std::string(value), .cgroup = {}};
  }
  absl::ConsumePrefix(&value, "tgid=");
  int32_t tgid = 0;
  if (!AllDigits(value) || !absl::SimpleAtoi(value, &tgid) || tgid < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        QuoteInput(text),
        " is not tgid=N or N (a process id, 1..2147483647), comm=NAME or "
        "cgroup=PATH"));
  }
  return Selector{.tgid = tgid, .comm = {}, .cgroup = {}};
}

// AddMatch notes that `key` (a tgid, comm or cgroup path, shown as `shown`)
// is in group `id` by line `line`, unless another line put it in another
// group.
template <typename Key>
absl::Status AddMatch(absl::flat_hash_map<Key, GroupFile::Match>& matches,
                      Key key, const std::string& shown, uint64_t id,
                      int64_t line, const std::vector<std::string>& names) {
  const auto [it, added] = matches.try_emplace(key, GroupFile::Match{id, line});
  if (added || it->second.group == id) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      shown, " is in group ", QuoteInput(names[id - 1]),
      " here but in group ", QuoteInput(names[it->second.group - 1]),
      " at line ", it->second.line));
}

// ParseLine reads one rule line (blank and comment lines already skipped)
// into `file`, its groups numbered by `table`.
absl::Status ParseLine(absl::string_view line, int64_t number,
                       CacheGroupTable& table, GroupFile& file) {
  const size_t blank = line.find_first_of(" \t");
  if (blank == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "group ", QuoteInput(line),
        " names no process: want GROUP tgid=N, GROUP N, GROUP comm=NAME or "
        "GROUP cgroup=PATH"));
  }
  const absl::string_view name = line.substr(0, blank);
  ASSIGN_OR_RETURN(const Selector selector,
                   ParseSelector(absl::StripLeadingAsciiWhitespace(
                       line.substr(blank))));
  const uint64_t id = table.IdOf(name);
  if (selector.tgid != 0) {
    return AddMatch(file.by_tgid, selector.tgid,
                    absl::StrCat("tgid=", selector.tgid), id, number,
                    table.names());
  }
  if (!selector.cgroup.empty()) {
    return AddMatch(file.by_cgroup, selector.cgroup,
                    absl::StrCat("cgroup=", QuoteInput(selector.cgroup)), id,
                    number, table.names());
  }
  return AddMatch(file.by_comm, selector.comm,
                  absl::StrCat("comm=", QuoteInput(selector.comm)), id,
                  number, table.names());
}

// Hit is a group file line that matched a process: its rule and selector.
struct Hit {
  GroupFile::Match match;
  std::string selector;  // as the line has it: tgid=N, comm="X", cgroup="P"
};

// FindHit appends the line `matches` has for `key`, if any, to `hits`.
template <typename Map, typename Key>
void FindHit(const Map& matches, const Key& key, std::string selector,
             std::vector<Hit>& hits) {
  if (const auto it = matches.find(key); it != matches.end()) {
    hits.push_back(Hit{it->second, std::move(selector)});
  }
}

// CommKey is `comm` as a key of GroupFile::by_comm.
absl::string_view CommKey(const Comm& comm) {
  const std::string_view view = comm.view();
  return absl::string_view(view.data(), view.size());
}

}  // namespace

absl::StatusOr<GroupFile> ParseGroupFile(LineReader& lines) {
  GroupFile file;
  file.path = lines.path();
  CacheGroupTable table;
  while (true) {
    ASSIGN_OR_RETURN(const std::optional<std::string_view> text,
                     lines.NextLine());
    if (!text.has_value()) break;
    const absl::string_view line =
        absl::StripAsciiWhitespace(absl::string_view(text->data(), text->size()));
    if (line.empty() || line.front() == '#') continue;
    if (absl::Status status =
            ParseLine(line, lines.line_number(), table, file);
        !status.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          file.path, ":", lines.line_number(), ": ", status.message()));
    }
  }
  file.names = table.names();
  return file;
}

absl::StatusOr<GroupBy> ParseGroupBy(absl::string_view rule) {
  GroupBy group_by;
  group_by.text = std::string(rule);
  if (rule == "tgid") return group_by;
  if (rule == "comm") {
    group_by.kind = GroupBy::Kind::kComm;
    return group_by;
  }
  if (rule == "cgroup") {
    group_by.kind = GroupBy::Kind::kCgroup;
    return group_by;
  }
  absl::string_view path = rule;
  if (!absl::ConsumePrefix(&path, "file:") || path.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        QuoteInput(rule), " is not tgid, comm, cgroup or file:PATH"));
  }
  ASSIGN_OR_RETURN(LineReader lines, LineReader::Open(path));
  ASSIGN_OR_RETURN(GroupFile file, ParseGroupFile(lines));
  group_by.kind = GroupBy::Kind::kFile;
  group_by.file = std::make_shared<const GroupFile>(std::move(file));
  return group_by;
}

bool NeedsCgroupPaths(const GroupBy& rule) {
  return rule.kind == GroupBy::Kind::kCgroup ||
         (rule.kind == GroupBy::Kind::kFile && !rule.file->by_cgroup.empty());
}

absl::Status CgroupPathsMissing(const GroupBy& rule, absl::string_view input,
                                absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "--group-by ", rule.text,
      rule.kind == GroupBy::Kind::kFile ? " (its cgroup= lines)" : "",
      " needs each process's cgroup path, and input ", input,
      " carries none: ", why,
      "; only a trace written by `schedcache record --output` has them (its "
      "`# schedcache_cgroup:` lines)"));
}

uint64_t CacheGroupTable::IdOf(absl::string_view name) {
  const auto [it, added] = ids_.try_emplace(name, names_.size() + 1);
  if (added) names_.emplace_back(name);
  return it->second;
}

CacheGroupingSink::CacheGroupingSink(GroupBy rule, EventSink& next)
    : rule_(std::move(rule)), next_(next) {
  if (rule_.kind == GroupBy::Kind::kFile) {
    for (const std::string& name : rule_.file->names) groups_.IdOf(name);
  }
}

absl::StatusOr<uint64_t> CacheGroupingSink::GroupOf(int32_t tgid,
                                                    const Comm& comm) {
  const auto cgroup = cgroups_.find(tgid);
  if (rule_.kind == GroupBy::Kind::kComm) {
    return comm.empty() ? kOwnCacheGroup : groups_.IdOf(CommKey(comm));
  }
  if (rule_.kind == GroupBy::Kind::kCgroup) {
    return cgroup == cgroups_.end() ? kOwnCacheGroup
                                    : groups_.IdOf(cgroup->second);
  }
  const GroupFile& file = *rule_.file;
  std::vector<Hit> hits;
  FindHit(file.by_tgid, tgid, absl::StrCat("tgid=", tgid), hits);
  if (!comm.empty()) {
    FindHit(file.by_comm, std::string(CommKey(comm)),
            absl::StrCat("comm=", QuoteInput(CommKey(comm))), hits);
  }
  if (cgroup != cgroups_.end()) {
    FindHit(file.by_cgroup, cgroup->second,
            absl::StrCat("cgroup=", QuoteInput(cgroup->second)), hits);
  }
  if (hits.empty()) return kOwnCacheGroup;
  for (const Hit& other : hits) {
    if (other.match.group == hits.front().match.group) continue;
    const std::vector<std::string>& names = groups_.names();
    return absl::InvalidArgumentError(absl::StrCat(
        file.path, ": process tgid ", tgid, " (comm ",
        QuoteInput(CommKey(comm)), ") is in group ",
        QuoteInput(names[hits.front().match.group - 1]), " by line ",
        hits.front().match.line, " (", hits.front().selector,
        ") and in group ", QuoteInput(names[other.match.group - 1]),
        " by line ", other.match.line, " (", other.selector,
        "); a process is in one group"));
  }
  return hits.front().match.group;
}

absl::Status CacheGroupingSink::OnSample(const Sample& sample) {
  if (rule_.kind == GroupBy::Kind::kTgid) return next_.OnSample(sample);
  Process& process = processes_[sample.tgid];
  if (!sample.comm.empty()) {
    const bool leader = sample.tid == sample.tgid;
    // The leader's comm wins; before it, the first comm seen stays.
    if ((leader || (!process.leader_named && process.comm.empty())) &&
        process.comm.view() != sample.comm.view()) {
      process.comm = sample.comm;
      process.resolved = false;
    }
    process.leader_named = process.leader_named || leader;
  }
  if (!process.resolved) {
    ASSIGN_OR_RETURN(process.group, GroupOf(sample.tgid, process.comm));
    process.resolved = true;
  }
  Sample grouped = sample;
  grouped.cache_group = process.group;
  return next_.OnSample(grouped);
}

absl::Status CacheGroupingSink::OnHandOver(const HandOver& hand_over) {
  return next_.OnHandOver(hand_over);
}

absl::Status CacheGroupingSink::OnProcessExit(const ProcessExit& exit) {
  processes_.erase(exit.tgid);
  cgroups_.erase(exit.tgid);
  return next_.OnProcessExit(exit);
}

absl::Status CacheGroupingSink::OnProcessStart(const ProcessStart& start) {
  // A new address space (an exec): its comm is learned again.
  processes_.erase(start.tgid);
  return next_.OnProcessStart(start);
}

absl::Status CacheGroupingSink::OnKernelDecision(
    const KernelDecision& decision) {
  return next_.OnKernelDecision(decision);
}

void CacheGroupingSink::OnInputLine(int64_t line) { next_.OnInputLine(line); }

void CacheGroupingSink::OnCgroup(int32_t tgid, absl::string_view path) {
  if (!NeedsCgroupPaths(rule_)) return;
  const auto [it, added] = cgroups_.try_emplace(tgid, path);
  if (!added) {
    if (it->second == path) return;
    it->second = std::string(path);
  }
  // Its next sample finds its group anew.
  if (const auto process = processes_.find(tgid);
      process != processes_.end()) {
    process->second.resolved = false;
  }
}

}  // namespace schedcache::ab
