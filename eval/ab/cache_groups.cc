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

// kCgroupRefusal is why the cgroup rule and cgroup= lines are refused.
constexpr absl::string_view kCgroupRefusal =
    "grouping by cgroup needs each process's cgroup path in the input, which "
    "`schedcache record` does not capture yet; group by tgid, comm or "
    "file:PATH with tgid= and comm= lines";

// kMaxCommBytes is the longest comm the kernel keeps (TASK_COMM_LEN 16 with
// its NUL), as Comm does.
constexpr size_t kMaxCommBytes = kCommLength - 1;

// Selector is a group file line's process: a tgid, or a comm.
struct Selector {
  int32_t tgid = 0;  // 0: a comm
  std::string comm;
};

bool AllDigits(absl::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return absl::ascii_isdigit(static_cast<unsigned char>(c));
  });
}

// ParseSelector reads `text`: tgid=N, N or comm=NAME.
absl::StatusOr<Selector> ParseSelector(absl::string_view text) {
  absl::string_view value = text;
  if (absl::StartsWith(value, "cgroup=")) {
    return absl::InvalidArgumentError(
        absl::StrCat(QuoteInput(text), ": ", kCgroupRefusal));
  }
  if (absl::ConsumePrefix(&value, "comm=")) {
    if (value.empty() || value.size() > kMaxCommBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          QuoteInput(text), ": a comm has 1 to ", kMaxCommBytes,
          " bytes (the kernel keeps no more), not ", value.size()));
    }
    return Selector{.tgid = 0, .comm = std::string(value)};
  }
  absl::ConsumePrefix(&value, "tgid=");
  int32_t tgid = 0;
  if (!AllDigits(value) || !absl::SimpleAtoi(value, &tgid) || tgid < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        QuoteInput(text),
        " is not tgid=N or N (a process id, 1..2147483647), comm=NAME or "
        "cgroup=PATH"));
  }
  return Selector{.tgid = tgid, .comm = {}};
}

// AddMatch notes that `key` (a tgid or comm, shown as `shown`) is in group
// `id` by line `line`, unless another line put it in another group.
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
        " names no process: want GROUP tgid=N, GROUP N or GROUP comm=NAME"));
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
  return AddMatch(file.by_comm, selector.comm,
                  absl::StrCat("comm=", QuoteInput(selector.comm)), id,
                  number, table.names());
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
  if (rule == "cgroup") return absl::InvalidArgumentError(kCgroupRefusal);
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
  if (rule_.kind == GroupBy::Kind::kComm) {
    return comm.empty() ? kOwnCacheGroup : groups_.IdOf(CommKey(comm));
  }
  const GroupFile& file = *rule_.file;
  const auto by_tgid = file.by_tgid.find(tgid);
  const auto by_comm =
      comm.empty() ? file.by_comm.end() : file.by_comm.find(CommKey(comm));
  const bool tgid_matched = by_tgid != file.by_tgid.end();
  const bool comm_matched = by_comm != file.by_comm.end();
  if (tgid_matched && comm_matched &&
      by_tgid->second.group != by_comm->second.group) {
    const std::vector<std::string>& names = groups_.names();
    return absl::InvalidArgumentError(absl::StrCat(
        file.path, ": process tgid ", tgid, " (comm ",
        QuoteInput(CommKey(comm)), ") is in group ",
        QuoteInput(names[by_tgid->second.group - 1]), " by line ",
        by_tgid->second.line, " (tgid=", tgid, ") and in group ",
        QuoteInput(names[by_comm->second.group - 1]), " by line ",
        by_comm->second.line, " (comm=", QuoteInput(CommKey(comm)),
        "); a process is in one group"));
  }
  if (tgid_matched) return by_tgid->second.group;
  if (comm_matched) return by_comm->second.group;
  return kOwnCacheGroup;
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

}  // namespace schedcache::ab
