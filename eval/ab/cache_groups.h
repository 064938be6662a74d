// Cache groups for `schedcache ab --group-by RULE` (docs/EVALUATION.md,
// "Cache groups: --group-by"): a transform on the event feed that sets each
// sample's Sample::cache_group from a rule, so any input can be replayed as
// if processes shared the kernel's cache group (docs/MODEL.md, Cache
// groups). Rules:
//
//   tgid        the default: samples pass unchanged (0, each process its own
//               group, unless a CSV's cache_group column names one), so the
//               report is the one of a run without the flag;
//   comm        one group per comm: every process of one name in one group;
//   cgroup      one group per cgroup path: every process of one cgroup in
//               one group; a process whose path the input does not give is
//               in its own group (0);
//   file:PATH   the groups a file names (below); a process it does not
//               match is in its own group (0).
//
// Cgroup paths come from the input: the `# schedcache_cgroup: TGID PATH`
// lines `schedcache record --output` writes (docs/LIVE.md, "Cgroup
// paths"), handed to OnCgroup by the trace replay in their place among the
// events. A path holds for its process until the next line for it or the
// process's exit (an exec keeps it; record writes the line again after
// one); a changed path changes membership at the process's next sample. An
// input that carries none (a workload, a CSV, a trace-cmd .dat, a trace
// not written by record) cannot be grouped by cgroup: CgroupPathsMissing.
//
// comm, cgroup and file: set every sample's group, replacing what the input
// said.
// A process's comm, for both, is its group leader's (the samples of the
// thread whose tid is the tgid, as /proc/PID/comm shows), or before one of
// those the first comm a sample of the process carried, so threads named
// apart (redis-server's "io_thd_1") do not move their process between
// groups. A process whose comm changes (an exec) changes membership at its
// next sample; a process exit or start forgets what was known of it.
//
// The group file: one rule a line,
//
//   GROUP SELECTOR
//
// GROUP is the group's name (a run of non-blank bytes), SELECTOR the rest
// of the line without its surrounding blanks: `tgid=N` or just `N` (a
// process id, 1..2147483647), `comm=NAME` (a process name as the kernel
// keeps it, at most 15 bytes; it may hold blanks), or `cgroup=PATH` (a
// cgroup path as /proc/PID/cgroup shows it, starting with '/'; it may hold
// blanks, not at its ends). Blank lines and lines whose first non-blank
// byte is '#' are skipped. The same process id, name or path on two lines
// of different groups is an error, as is, at run time, a process that two
// lines (tgid=, comm=, cgroup=) put in different groups; each names the
// file, the lines and the value.
//
// Group ids: named groups are numbered from 1 in order of first appearance
// (in the file for file:, in the input for comm and cgroup), so the same
// input gives
// the same ids, whatever --jobs. CacheGroupTable keeps id -> name for the
// reports.
//
// Thread contract: GroupBy is an immutable value (its file shared by
// copies), safe to read from any thread; a CacheGroupingSink is fed from one
// thread, as every EventSink.
#ifndef SCHEDCACHE_EVAL_AB_CACHE_GROUPS_H_
#define SCHEDCACHE_EVAL_AB_CACHE_GROUPS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "events/event.h"
#include "events/event_sink.h"
#include "trace/line_reader.h"

namespace schedcache::ab {

// GroupFile is a parsed group file.
struct GroupFile {
  // Match is one line's rule: the group it puts a process in, and the line.
  struct Match {
    uint64_t group = kOwnCacheGroup;
    int64_t line = 0;
  };
  std::string path;
  // The groups' names by id: names[i] is group i + 1.
  std::vector<std::string> names;
  absl::flat_hash_map<int32_t, Match> by_tgid;
  absl::flat_hash_map<std::string, Match> by_comm;
  absl::flat_hash_map<std::string, Match> by_cgroup;
};

// ParseGroupFile reads a group file from `lines`, named by lines.path() in
// its errors. Returns InvalidArgument "PATH:LINE: ..." naming the value at
// fault: a line without a selector, a selector of no known form, a process
// id out of range, an empty or too long comm, a cgroup path not starting
// with '/', or a process id, comm or cgroup path given two groups (naming
// both lines); or `lines`' read errors.
absl::StatusOr<GroupFile> ParseGroupFile(LineReader& lines);

// GroupBy is a parsed --group-by RULE.
struct GroupBy {
  enum class Kind { kTgid, kComm, kCgroup, kFile };
  Kind kind = Kind::kTgid;
  std::string text = "tgid";  // the rule as typed
  std::shared_ptr<const GroupFile> file;  // kFile only
};

// ParseGroupBy reads a RULE: tgid, comm, cgroup or file:PATH (the file is
// read now, through LineReader: plain, gzip or zstd). Returns
// InvalidArgument for another rule or ParseGroupFile's errors; or the
// file's read errors (NotFound...), each naming the path.
absl::StatusOr<GroupBy> ParseGroupBy(absl::string_view rule);

// NeedsCgroupPaths says whether `rule` groups by cgroup paths: cgroup, or a
// file with cgroup= lines.
bool NeedsCgroupPaths(const GroupBy& rule);

// CgroupPathsMissing is the InvalidArgument error of a run whose `rule`
// needs cgroup paths (NeedsCgroupPaths) on `input` (as the report names it,
// "trace:cap.txt"), which carries none, `why` saying what it is.
absl::Status CgroupPathsMissing(const GroupBy& rule, absl::string_view input,
                                absl::string_view why);

// CacheGroupTable is the id -> name table of one run's named groups: ids
// from 1, in order of first appearance.
class CacheGroupTable {
 public:
  // IdOf is the id of the group `name`, a new one when it is new.
  uint64_t IdOf(absl::string_view name);
  // names: group i + 1 is names()[i].
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::vector<std::string> names_;
  absl::flat_hash_map<std::string, uint64_t> ids_;
};

// CacheGroupingSink passes every event on to `next`, each sample with the
// cache group `rule` gives its process (the tgid rule: unchanged). A
// process matched into two groups (file:) stops the producer with
// InvalidArgument naming the file, both lines and the process.
class CacheGroupingSink : public EventSink {
 public:
  // `next` must outlive the sink.
  CacheGroupingSink(GroupBy rule, EventSink& next);

  absl::Status OnSample(const Sample& sample) override;
  absl::Status OnHandOver(const HandOver& hand_over) override;
  absl::Status OnProcessExit(const ProcessExit& exit) override;
  absl::Status OnProcessStart(const ProcessStart& start) override;
  absl::Status OnKernelDecision(const KernelDecision& decision) override;
  void OnInputLine(int64_t line) override;
  // OnCgroup notes that process `tgid` is in cgroup `path` from here on
  // (trace replay's TraceOptions::on_cgroup).
  void OnCgroup(int32_t tgid, absl::string_view path);

  // groups is the table of the groups named so far (all of a file's).
  const CacheGroupTable& groups() const { return groups_; }

 private:
  // Process is what the sink knows of one process.
  struct Process {
    Comm comm;                  // empty: none seen yet
    bool leader_named = false;  // comm is the group leader's
    bool resolved = false;      // group is up to date with comm
    uint64_t group = kOwnCacheGroup;
  };
  // GroupOf is the group of process `tgid` named `comm` (empty: unknown).
  absl::StatusOr<uint64_t> GroupOf(int32_t tgid, const Comm& comm);

  const GroupBy rule_;
  EventSink& next_;
  CacheGroupTable groups_;
  absl::flat_hash_map<int32_t, Process> processes_;  // by tgid
  // Each process's cgroup path, as the input last gave it, until its exit.
  absl::flat_hash_map<int32_t, std::string> cgroups_;
};

}  // namespace schedcache::ab

#endif  // SCHEDCACHE_EVAL_AB_CACHE_GROUPS_H_
