#include "trace/trace_line.h"

#include <bit>
#include <cstring>
#include <limits>
#include <optional>

namespace schedcache {
namespace {

using Kind = TraceLine::Kind;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// FindByte is the position of the first `c` in `s` at or after `from`
// (s.size() when there is none), eight bytes at a time: a call to memchr
// costs more than the few bytes between two fields of a trace line.
[[gnu::always_inline]] inline size_t FindByte(std::string_view s, size_t from,
                                              char c) {
  if constexpr (std::endian::native == std::endian::little) {
    constexpr uint64_t kOnes = 0x0101010101010101;
    constexpr uint64_t kHighs = 0x8080808080808080;
    const uint64_t pattern = kOnes * static_cast<unsigned char>(c);
    for (; from + 8 <= s.size(); from += 8) {
      uint64_t word;
      std::memcpy(&word, s.data() + from, sizeof(word));
      const uint64_t x = word ^ pattern;  // a zero byte where `c` is
      // The lowest flagged byte is the first zero one: a borrow can flag
      // only bytes above a zero byte.
      const uint64_t zero = (x - kOnes) & ~x & kHighs;
      if (zero != 0) return from + std::countr_zero(zero) / 8;
    }
  }
  for (; from < s.size(); ++from) {
    if (s[from] == c) return from;
  }
  return s.size();
}

// ParseInt reads a whole non-negative decimal int32 (at most 9 digits, so it
// cannot overflow).
std::optional<int32_t> ParseInt(std::string_view s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  int32_t v = 0;
  for (char c : s) {
    if (!IsDigit(c)) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

// LeadingInt reads the digits at the start of `s` (stopping at the first
// non-digit) as an int32: at least one and at most 9 of them.
std::optional<int32_t> LeadingInt(std::string_view s) {
  int32_t v = 0;
  size_t n = 0;
  for (; n < s.size() && IsDigit(s[n]); ++n) {
    if (n == 9) return std::nullopt;
    v = v * 10 + (s[n] - '0');
  }
  if (n == 0) return std::nullopt;
  return v;
}

// ParseInt64 reads a whole decimal int64, optionally negative, of at most
// 18 digits (so it cannot overflow).
std::optional<int64_t> ParseInt64(std::string_view s) {
  const bool negative = !s.empty() && s.front() == '-';
  if (negative) s.remove_prefix(1);
  if (s.empty() || s.size() > 18) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (!IsDigit(c)) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return negative ? -v : v;
}

// ParseHex64 reads 1 to 16 lowercase hexadecimal digits as a uint64.
std::optional<uint64_t> ParseHex64(std::string_view s) {
  if (s.empty() || s.size() > 16) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    const int digit = IsDigit(c)              ? c - '0'
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                             : -1;
    if (digit < 0) return std::nullopt;
    v = v * 16 + static_cast<uint64_t>(digit);
  }
  return v;
}

// ParseTimestamp reads "SECONDS.FRACTION" (fraction 1..9 digits) as ns.
std::optional<int64_t> ParseTimestamp(std::string_view s) {
  const size_t dot = s.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot > 9) return std::nullopt;
  const std::string_view frac = s.substr(dot + 1);
  if (frac.empty() || frac.size() > 9) return std::nullopt;
  const std::optional<int32_t> sec = ParseInt(s.substr(0, dot));
  const std::optional<int32_t> f = ParseInt(frac);
  if (!sec || !f) return std::nullopt;
  int64_t ns = *f;
  for (size_t i = frac.size(); i < 9; ++i) ns *= 10;
  return int64_t{*sec} * 1'000'000'000 + ns;
}

std::string_view TrimLeft(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  return s;
}

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' ||
                        s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// NextToken splits off the text up to the next space.
std::string_view NextToken(std::string_view& s) {
  s = TrimLeft(s);
  const size_t end = FindByte(s, 0, ' ');
  const std::string_view token = s.substr(0, end);
  s.remove_prefix(end);
  return token;
}

TraceLine Malformed(std::string_view why) {
  TraceLine line;
  line.kind = Kind::kMalformed;
  line.error = why;
  return line;
}

// SetMalformed makes `out` a malformed line (its header fields cleared).
void SetMalformed(TraceLine& out, std::string_view why) {
  out = Malformed(why);
}

// kPerfEventPrefix is the "SYSTEM:" perf script puts before the event name;
// its presence is what marks a line as perf script text.
constexpr std::string_view kPerfEventPrefix = "sched:";

// ParseAfterCpu reads "[FLAGS] SECONDS.FRACTION: EVENT: FIELDS" (the text
// after the "[CPU]" bracket), EVENT being "sched:NAME" in perf script text
// (`perf_form` then says so and `event` is NAME). Returns false when it does
// not fit.
bool ParseAfterCpu(std::string_view rest, TraceLine& out,
                   std::string_view& event, std::string_view& fields,
                   bool& perf_form) {
  std::string_view token = NextToken(rest);
  if (token.empty()) return false;
  if (token.back() != ':') token = NextToken(rest);  // skip the flags
  if (token.size() < 2 || token.back() != ':') return false;
  const std::optional<int64_t> ts =
      ParseTimestamp(token.substr(0, token.size() - 1));
  if (!ts) return false;
  rest = TrimLeft(rest);
  perf_form = rest.substr(0, kPerfEventPrefix.size()) == kPerfEventPrefix;
  if (perf_form) rest.remove_prefix(kPerfEventPrefix.size());
  const size_t colon = rest.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  event = rest.substr(0, colon);
  fields = TrimLeft(rest.substr(colon + 1));
  out.timestamp_ns = *ts;
  return true;
}

// ParsePerfTask reads perf script's "COMM TID" (the comm may hold spaces;
// the tid is the last word). perf prints ":-1 -1" for a task it has no
// record of (one that ran in another PID namespace, or ended before perf
// saw it): no task, which a switch does not need (its fields say who ran).
bool ParsePerfTask(std::string_view task, TraceLine& out) {
  task = TrimRight(task);
  const size_t space = task.rfind(' ');
  if (space == std::string_view::npos) return false;
  out.task_tgid = 0;  // perf script's default fields show no tgid
  const std::string_view tid_text = task.substr(space + 1);
  if (tid_text == "-1") {
    out.task_pid = 0;
    return true;
  }
  const std::optional<int32_t> tid = ParseInt(tid_text);
  if (!tid) return false;
  out.task_pid = *tid;
  return true;
}

// ParseTask reads "COMM-PID" optionally followed by "(TGID)".
bool ParseTask(std::string_view task, TraceLine& out) {
  task = TrimRight(task);
  out.task_tgid = 0;
  if (!task.empty() && task.back() == ')') {
    const size_t open = task.rfind('(');
    if (open == std::string_view::npos) return false;
    std::string_view tgid = TrimLeft(task.substr(open + 1));
    tgid.remove_suffix(1);
    if (tgid.find_first_not_of('-') == std::string_view::npos) {
      out.task_tgid = 0;  // "(-------)": no tgid recorded (the idle task)
    } else if (std::optional<int32_t> v = ParseInt(tgid)) {
      out.task_tgid = *v;
    } else {
      return false;
    }
    task = TrimRight(task.substr(0, open));
  }
  const size_t dash = task.rfind('-');
  if (dash == std::string_view::npos) return false;
  const std::optional<int32_t> pid = ParseInt(task.substr(dash + 1));
  if (!pid) return false;
  out.task_pid = *pid;
  return true;
}

// ParseHeader finds the "[CPU]" bracket that is followed by a timestamp and
// fills the header fields; returns false when there is none. The task before
// the bracket is read in the layout the event name says (perf or ftrace).
bool ParseHeader(std::string_view line, TraceLine& out,
                 std::string_view& event, std::string_view& fields) {
  for (size_t open = line.find('['); open != std::string_view::npos;
       open = line.find('[', open + 1)) {
    size_t close = open + 1;
    while (close < line.size() && IsDigit(line[close])) ++close;
    if (close == open + 1 || close >= line.size() || line[close] != ']') {
      continue;
    }
    const std::optional<int32_t> cpu =
        ParseInt(line.substr(open + 1, close - open - 1));
    bool perf_form = false;
    if (!cpu || !ParseAfterCpu(line.substr(close + 1), out, event, fields,
                               perf_form)) {
      continue;
    }
    out.cpu = *cpu;
    const std::string_view task = line.substr(0, open);
    return perf_form ? ParsePerfTask(task, out) : ParseTask(task, out);
  }
  return false;
}

// FieldAfter returns the text after "key" in `fields` (key includes the
// leading space and '='), or nullopt.
std::optional<std::string_view> FieldAfter(std::string_view fields,
                                           std::string_view key) {
  const size_t at = fields.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  return fields.substr(at + key.size());
}

// IsRunnableState reads a printed prev_state: "R", or "R+" for a preempted
// task, is runnable; any other letters are not. nullopt when it is empty.
std::optional<bool> IsRunnableState(std::string_view state) {
  if (state.empty()) return std::nullopt;
  if (state.back() == '+') state.remove_suffix(1);
  return state == "R";
}

// ParseCommPid reads the sched plugin's "COMM:PID [PRIO]..." from `side`.
bool ParseCommPid(std::string_view side, std::string_view& comm,
                  int32_t& pid) {
  const size_t bracket = side.rfind(" [");
  if (bracket == std::string_view::npos) return false;
  side = side.substr(0, bracket);
  const size_t colon = side.rfind(':');
  if (colon == std::string_view::npos) return false;
  const std::optional<int32_t> v = ParseInt(side.substr(colon + 1));
  if (!v) return false;
  comm = side.substr(0, colon);
  pid = *v;
  return true;
}

// The keys of the kernel's sched_switch fields that replay reads, each
// with the space before it.
constexpr std::string_view kPrevPidKey = " prev_pid=";
constexpr std::string_view kPrevStateKey = " prev_state=";
constexpr std::string_view kArrowKey = " ==> next_comm=";
constexpr std::string_view kNextPidKey = " next_pid=";

// SwitchKeys says where each key starts in the fields (npos: not found):
// the first " prev_pid=" and " ==> next_comm=", the first " prev_state="
// from prev_pid on (npos also when it is not before the arrow), and the
// first " next_pid=" after the arrow's text (npos also when prev_pid= or
// the arrow is missing: the line is malformed before next_pid= matters).
struct SwitchKeys {
  size_t prev_pid = std::string_view::npos;
  size_t prev_state = std::string_view::npos;
  size_t arrow = std::string_view::npos;
  size_t next_pid = std::string_view::npos;
};

// FindKeyFrom is the first `key` at or after `from` that starts before
// `limit`, found by walking the spaces (every key starts with one and has
// at least two bytes); npos when there is none. Inlined, so that the
// comparison with a constant key compiles to a few loads, not a memcmp.
[[gnu::always_inline]] inline size_t FindKeyFrom(std::string_view fields,
                                                 std::string_view key,
                                                 size_t from, size_t limit) {
  for (size_t at = FindByte(fields, from, ' ');
       at < limit && at < fields.size(); at = FindByte(fields, at + 1, ' ')) {
    if (fields.substr(at).starts_with(key)) return at;
  }
  return std::string_view::npos;
}

// FindSwitchKeys finds each key as a search of the text from the front
// would, walking only as far as the result can depend on. The arrow is
// found by its '>', which nothing else in the kernel's fields holds; a
// prev_state= is wanted only before the arrow, so the walk for it stops
// there (one after it reads as none, as the caller treats it).
SwitchKeys FindSwitchKeys(std::string_view fields) {
  constexpr size_t kNone = std::string_view::npos;
  constexpr size_t kArrowHead = 3;  // where '>' sits in kArrowKey
  SwitchKeys keys;
  for (size_t at = FindByte(fields, kArrowHead, '>'); at < fields.size();
       at = FindByte(fields, at + 1, '>')) {
    if (fields.substr(at - kArrowHead).starts_with(kArrowKey)) {
      keys.arrow = at - kArrowHead;
      break;
    }
  }
  keys.prev_pid = FindKeyFrom(fields, kPrevPidKey, 0, kNone);
  if (keys.prev_pid != kNone && keys.arrow != kNone) {
    keys.prev_state =
        FindKeyFrom(fields, kPrevStateKey, keys.prev_pid, keys.arrow);
    keys.next_pid =
        FindKeyFrom(fields, kNextPidKey, keys.arrow + kArrowKey.size(), kNone);
  }
  return keys;
}

// ParseKernelSwitch reads the kernel's "prev_comm=... prev_pid=...
// prev_state=... ==> next_comm=... next_pid=..." fields.
void ParseKernelSwitch(std::string_view fields, TraceLine& out) {
  const SwitchKeys keys = FindSwitchKeys(fields);
  const size_t prev_pid_at = keys.prev_pid;
  const size_t arrow = keys.arrow;
  if (prev_pid_at == std::string_view::npos ||
      arrow == std::string_view::npos || arrow < prev_pid_at) {
    return SetMalformed(out,
                        "sched_switch without prev_pid= or ==> next_comm=");
  }
  if (keys.next_pid == std::string_view::npos) {
    return SetMalformed(out, "sched_switch without next_pid=");
  }
  const std::optional<int32_t> prev_pid =
      LeadingInt(fields.substr(prev_pid_at + kPrevPidKey.size()));
  const std::optional<int32_t> next_pid =
      LeadingInt(fields.substr(keys.next_pid + kNextPidKey.size()));
  if (!prev_pid || !next_pid) {
    return SetMalformed(out,
                        "sched_switch prev_pid or next_pid is not a number");
  }
  const size_t state_at = keys.prev_state;
  const size_t state_begin = state_at + kPrevStateKey.size();
  const std::optional<bool> runnable =
      state_at < arrow
          ? IsRunnableState(fields.substr(state_begin, arrow - state_begin))
          : std::nullopt;
  if (!runnable) {
    return SetMalformed(out, "sched_switch without a prev_state= before ==>");
  }
  const size_t next_begin = arrow + kArrowKey.size();
  out.prev_runnable = *runnable;
  out.prev_comm = fields.substr(10, prev_pid_at - 10);
  out.prev_pid = *prev_pid;
  out.next_comm = fields.substr(next_begin, keys.next_pid - next_begin);
  out.next_pid = *next_pid;
}

// ParsePluginSwitch reads the sched plugin's "COMM:PID [PRIO] STATE ==>
// COMM:PID [PRIO]".
void ParsePluginSwitch(std::string_view fields, TraceLine& out) {
  const size_t arrow = fields.find(" ==> ");
  const std::string_view prev = fields.substr(0, arrow);
  const size_t prio_end = prev.rfind(']');
  const std::optional<bool> runnable =
      prio_end == std::string_view::npos
          ? std::nullopt
          : IsRunnableState(TrimLeft(prev.substr(prio_end + 1)));
  if (arrow == std::string_view::npos || !runnable ||
      !ParseCommPid(prev, out.prev_comm, out.prev_pid) ||
      !ParseCommPid(TrimRight(fields.substr(arrow + 5)), out.next_comm,
                    out.next_pid)) {
    return SetMalformed(out,
                        "sched_switch fields are neither prev_comm=... nor "
                        "COMM:PID [PRIO] STATE ==> COMM:PID [PRIO]");
  }
  out.prev_runnable = *runnable;
}

void ParseSwitch(std::string_view fields, TraceLine& out) {
  out.kind = Kind::kSwitch;
  return fields.substr(0, 10) == "prev_comm="
             ? ParseKernelSwitch(fields, out)
             : ParsePluginSwitch(fields, out);
}

// ParseCommAndPid reads the leading "comm=COMM pid=PID" of migrate/exit.
bool ParseCommAndPid(std::string_view fields, TraceLine& out) {
  if (fields.substr(0, 5) != "comm=") return false;
  const size_t pid_at = fields.find(" pid=");
  if (pid_at == std::string_view::npos) return false;
  const std::optional<int32_t> pid = LeadingInt(fields.substr(pid_at + 5));
  if (!pid) return false;
  out.comm = fields.substr(5, pid_at - 5);
  out.pid = *pid;
  return true;
}

void ParseMigrate(std::string_view fields, TraceLine& out) {
  out.kind = Kind::kMigrate;
  const std::optional<std::string_view> orig = FieldAfter(fields, " orig_cpu=");
  const std::optional<std::string_view> dest = FieldAfter(fields, " dest_cpu=");
  std::optional<int32_t> orig_cpu, dest_cpu;
  if (orig && dest) {
    orig_cpu = LeadingInt(*orig);
    dest_cpu = LeadingInt(*dest);
  }
  if (!ParseCommAndPid(fields, out) || !orig_cpu || !dest_cpu) {
    return SetMalformed(out,
                        "sched_migrate_task without comm=, pid=, orig_cpu= "
                        "and dest_cpu=");
  }
  out.orig_cpu = *orig_cpu;
  out.dest_cpu = *dest_cpu;
}

void ParseExit(std::string_view fields, TraceLine& out) {
  out.kind = Kind::kExit;
  if (!ParseCommAndPid(fields, out)) {
    return SetMalformed(out, "sched_process_exit without comm= and pid=");
  }
}

// FieldReader takes "key=value" fields off the front of a space-separated
// list in a fixed order; the first missing, misplaced or unreadable field
// leaves `error` set to the static text of `what` for it.
class FieldReader {
 public:
  explicit FieldReader(std::string_view fields) : rest_(fields) {}

  // Int reads the next field, which must be `key` with a decimal value.
  template <typename T>
  void Int(std::string_view key, std::string_view what, T& out) {
    const std::optional<std::string_view> value = Next(key, what);
    if (!value) return;
    const std::optional<int64_t> v = ParseInt64(*value);
    if (!v || *v < std::numeric_limits<T>::min() ||
        *v > std::numeric_limits<T>::max()) {
      error = what;
      return;
    }
    out = static_cast<T>(*v);
  }
  // OptionalInt reads the next field as Int does when it is `key`, and
  // returns whether it was; `out` stays as it is when the next field is
  // another or none.
  template <typename T>
  bool OptionalInt(std::string_view key, std::string_view what, T& out) {
    if (!error.empty() || !NextIs(key)) return false;
    Int(key, what, out);
    return true;
  }
  void Hex(std::string_view key, std::string_view what, uint64_t& out) {
    const std::optional<std::string_view> value = Next(key, what);
    if (!value) return;
    const std::optional<uint64_t> v = ParseHex64(*value);
    if (v) out = *v;
    else error = what;
  }
  // End sets `error` to `what` when fields remain.
  void End(std::string_view what) {
    if (error.empty() && !TrimLeft(rest_).empty()) error = what;
  }

  std::string_view error;

 private:
  static bool IsField(std::string_view token, std::string_view key) {
    return token.size() > key.size() && token.substr(0, key.size()) == key &&
           token[key.size()] == '=';
  }
  bool NextIs(std::string_view key) const {
    std::string_view rest = rest_;
    return IsField(NextToken(rest), key);
  }
  std::optional<std::string_view> Next(std::string_view key,
                                       std::string_view what) {
    if (!error.empty()) return std::nullopt;
    const std::string_view token = NextToken(rest_);
    if (!IsField(token, key)) {
      error = what;
      return std::nullopt;
    }
    return token.substr(key.size() + 1);
  }

  std::string_view rest_;
};

void ParseKernelDecision(std::string_view fields, TraceLine& out) {
  out.kind = Kind::kKernelDecision;
  KernelDecision& d = out.decision;
  d.timestamp_ns = out.timestamp_ns;
  d.cpu = out.cpu;
  FieldReader r(fields);
  r.Int("pid", "schedcache_task_cache_work: pid= missing or not a number", d.tid);
  r.Int("tgid", "schedcache_task_cache_work: tgid= missing or not a number",
        d.tgid);
  r.Int("cpu", "schedcache_task_cache_work: cpu= missing or not a number",
        d.preferred_cpu);
  int32_t scanned = -1;
  r.Int("scanned", "schedcache_task_cache_work: scanned= missing or not 0/1",
        scanned);
  if (r.error.empty() && scanned != 0 && scanned != 1) {
    r.error = "schedcache_task_cache_work: scanned= missing or not 0/1";
  }
  d.scanned = scanned == 1;
  r.Int("nr_running_avg",
        "schedcache_task_cache_work: nr_running_avg= missing or not a number",
        d.nr_running_avg);
  r.Int("footprint",
        "schedcache_task_cache_work: footprint= missing or not a number",
        d.footprint);
  r.Hex("group", "schedcache_task_cache_work: group= missing or not hex",
        d.group);
  r.Int("jiffies",
        "schedcache_task_cache_work: jiffies= missing or not a number",
        d.jiffies);
  r.Int("group_epoch",
        "schedcache_task_cache_work: group_epoch= missing or not a number",
        d.group_epoch);
  r.Int("next_scan",
        "schedcache_task_cache_work: next_scan= missing or not a number",
        d.next_scan);
  r.Int("cpu_epoch",
        "schedcache_task_cache_work: cpu_epoch= missing or not a number",
        d.cpu_epoch);
  r.Int("cpu_epoch_next",
        "schedcache_task_cache_work: cpu_epoch_next= missing or not a number",
        d.cpu_epoch_next);
  r.End("schedcache_task_cache_work: unknown field after cpu_epoch_next=");
  if (r.error.empty() && (d.tid <= 0 || d.tgid <= 0 || d.preferred_cpu < -1)) {
    r.error = "schedcache_task_cache_work: pid and tgid must be > 0, cpu >= -1";
  }
  if (!r.error.empty()) return SetMalformed(out, r.error);
}

void ParseKernelTick(std::string_view fields, TraceLine& out) {
  out.kind = Kind::kKernelTick;
  KernelTick& t = out.tick;
  t.timestamp_ns = out.timestamp_ns;
  t.cpu = out.cpu;
  FieldReader r(fields);
  r.Int("pid", "schedcache_sched_tick: pid= missing or not a number", t.tid);
  r.Int("tgid", "schedcache_sched_tick: tgid= missing or not a number",
        t.tgid);
  r.Int("jiffies", "schedcache_sched_tick: jiffies= missing or not a number",
        t.jiffies);
  // The NUMA attributes, each absent when unknown (and in captures older
  // than them).
  const bool has_node = r.OptionalInt(
      "numa_preferred_nid",
      "schedcache_sched_tick: numa_preferred_nid= not a number", t.numa_node);
  const bool has_footprint = r.OptionalInt(
      "footprint", "schedcache_sched_tick: footprint= not a number",
      t.footprint_pages);
  r.End("schedcache_sched_tick: unknown field after jiffies= and its "
        "optional numa_preferred_nid= footprint=");
  if (r.error.empty() &&
      (t.tid < 0 || t.tgid < 0 || (t.tid == 0) != (t.tgid == 0))) {
    r.error = "schedcache_sched_tick: pid and tgid must be both 0 (idle) or "
              "both > 0";
  }
  if (r.error.empty() &&
      ((has_node && t.numa_node < -1) ||
       (has_footprint && t.footprint_pages < 0))) {
    r.error = "schedcache_sched_tick: numa_preferred_nid must be >= -1 and "
              "footprint >= 0";
  }
  if (!r.error.empty()) return SetMalformed(out, r.error);
}

// ParseNewTask reads "pid=N comm=COMM clone_flags=HEX oom_score_adj=N"; the
// comm may hold spaces, so clone_flags is found from the right.
void ParseNewTask(std::string_view fields, TraceLine& out) {
  out.kind = Kind::kNewTask;
  const size_t comm_at = fields.find(" comm=");
  const size_t flags_at = fields.rfind(" clone_flags=");
  if (fields.substr(0, 4) != "pid=" || comm_at == std::string_view::npos ||
      flags_at == std::string_view::npos || flags_at < comm_at) {
    return SetMalformed(out,
                        "task_newtask without pid=, comm= and clone_flags=");
  }
  const std::optional<int32_t> pid = ParseInt(fields.substr(4, comm_at - 4));
  std::string_view flags = fields.substr(flags_at + 13);
  flags = flags.substr(0, flags.find(' '));
  const std::optional<uint64_t> clone_flags = ParseHex64(flags);
  if (!pid || *pid <= 0 || !clone_flags) {
    return SetMalformed(out,
                        "task_newtask pid= is not a positive number or "
                        "clone_flags= is not hex");
  }
  out.pid = *pid;
  out.comm = fields.substr(comm_at + 6, flags_at - comm_at - 6);
  out.clone_flags = *clone_flags;
}

// ParseExec reads "filename=PATH pid=N old_pid=N"; the path may hold spaces,
// so the numbers are found from the right.
void ParseExec(std::string_view fields, TraceLine& out) {
  out.kind = Kind::kExec;
  const size_t old_pid_at = fields.rfind(" old_pid=");
  const size_t pid_at = old_pid_at == std::string_view::npos
                            ? std::string_view::npos
                            : fields.rfind(" pid=", old_pid_at);
  if (fields.substr(0, 9) != "filename=" || pid_at == std::string_view::npos ||
      pid_at <= 9) {
    return SetMalformed(
        out, "sched_process_exec without filename=, pid= and old_pid=");
  }
  const std::optional<int32_t> pid =
      ParseInt(fields.substr(pid_at + 5, old_pid_at - pid_at - 5));
  const std::optional<int32_t> old_pid = ParseInt(fields.substr(old_pid_at + 9));
  if (!pid || !old_pid || *pid <= 0 || *old_pid <= 0) {
    return SetMalformed(out,
                        "sched_process_exec pid= or old_pid= is not a positive "
                        "number");
  }
  out.filename = fields.substr(9, pid_at - 9);
  out.pid = *pid;
  out.old_pid = *old_pid;
}

// kKernelClockPrefix starts the header comment of the kernel's clock.
constexpr std::string_view kKernelClockPrefix = "# schedcache_kernel_clock:";

TraceLine ParseKernelClock(std::string_view fields) {
  TraceLine out;
  out.kind = Kind::kKernelClock;
  KernelClock& c = out.clock;
  FieldReader r(fields);
  r.Int("hz", "schedcache_kernel_clock: hz= missing or not a number", c.hz);
  r.Int("jiffies", "schedcache_kernel_clock: jiffies= missing or not a number",
        c.jiffies);
  r.Int("at_ns", "schedcache_kernel_clock: at_ns= missing or not a number",
        c.at_ns);
  r.Int("epoch_period",
        "schedcache_kernel_clock: epoch_period= missing or not a number",
        c.epoch_period);
  r.Int("cpu_epoch_next",
        "schedcache_kernel_clock: cpu_epoch_next= missing or not a number",
        c.cpu_epoch_next);
  r.End("schedcache_kernel_clock: unknown field after cpu_epoch_next=");
  if (r.error.empty() && (c.hz <= 0 || c.epoch_period <= 0 || c.at_ns < 0)) {
    r.error = "schedcache_kernel_clock: hz and epoch_period must be > 0, "
              "at_ns >= 0";
  }
  if (!r.error.empty()) return Malformed(r.error);
  return out;
}

// kCgroupPrefix starts the comment of a process's cgroup path.
constexpr std::string_view kCgroupPrefix = "# schedcache_cgroup:";

// ParseCgroup reads " TGID PATH" (PATH escaped: one blank-free token).
TraceLine ParseCgroup(std::string_view fields) {
  fields = TrimRight(fields);
  const size_t pid_at = fields.find_first_not_of(' ');
  const size_t blank = pid_at == std::string_view::npos
                           ? std::string_view::npos
                           : fields.find(' ', pid_at);
  if (blank == std::string_view::npos) {
    return Malformed("schedcache_cgroup: want TGID PATH");
  }
  const std::optional<int32_t> tgid =
      ParseInt(fields.substr(pid_at, blank - pid_at));
  const std::string_view path = fields.substr(blank + 1);
  if (!tgid || *tgid <= 0) {
    return Malformed("schedcache_cgroup: TGID is not a positive number");
  }
  if (path.empty() || path.find_first_of(" \t") != std::string_view::npos) {
    return Malformed(
        "schedcache_cgroup: PATH is empty or holds a blank (blanks are "
        "written \\040)");
  }
  TraceLine out;
  out.kind = Kind::kCgroup;
  out.pid = *tgid;
  out.cgroup_path = path;
  return out;
}

// kKernelDecisionEvent is the event name of schedcache's decision lines.
constexpr std::string_view kKernelDecisionEvent = "schedcache_task_cache_work";
// kKernelTickEvent is the event name of schedcache's tick lines.
constexpr std::string_view kKernelTickEvent = "schedcache_sched_tick";
// kNewTaskEvent is the one event replay reads that is not named sched_*.
constexpr std::string_view kNewTaskEvent = "task_newtask";

// UsedEvent tells whether the line names an event replay consumes, so a
// line that fails to parse is malformed rather than skipped.
bool NamesUsedEvent(std::string_view line) {
  return line.find("sched_switch:") != std::string_view::npos ||
         line.find("sched_migrate_task:") != std::string_view::npos ||
         line.find("sched_process_exit:") != std::string_view::npos ||
         line.find("sched_process_exec:") != std::string_view::npos ||
         line.find("task_newtask:") != std::string_view::npos ||
         line.find(kKernelDecisionEvent) != std::string_view::npos ||
         line.find(kKernelTickEvent) != std::string_view::npos;
}

}  // namespace

TraceLine ParseTraceLine(std::string_view line) {
  // Every return is of `out`, so it is built in the caller's TraceLine (344
  // bytes) and never copied.
  TraceLine out;
  if (line.substr(0, kKernelClockPrefix.size()) == kKernelClockPrefix) {
    out = ParseKernelClock(TrimRight(line.substr(kKernelClockPrefix.size())));
    return out;
  }
  if (line.substr(0, kCgroupPrefix.size()) == kCgroupPrefix) {
    out = ParseCgroup(line.substr(kCgroupPrefix.size()));
    return out;
  }
  if (line.empty() || line.front() == '#') return out;  // kNotScheduler
  // The header comes first and names the event, so a line is looked for
  // the event names only when it has none, or an event replay does not
  // use: what such a line is follows from the names alone.
  line = TrimRight(line);
  std::string_view event, fields;
  if (!ParseHeader(line, out, event, fields)) {
    out = NamesUsedEvent(line)
              ? Malformed(
                    "no 'TASK-PID [CPU] SECONDS.FRACTION: EVENT:' header "
                    "(ftrace) nor 'COMM TID [CPU] SECONDS.FRACTION: "
                    "sched:EVENT:' (perf script)")
              : TraceLine();
  } else if (event == "sched_switch") {
    ParseSwitch(fields, out);
  } else if (event == "sched_migrate_task") {
    ParseMigrate(fields, out);
  } else if (event == "sched_process_exit") {
    ParseExit(fields, out);
  } else if (event == "sched_process_exec") {
    ParseExec(fields, out);
  } else if (event == kNewTaskEvent) {
    ParseNewTask(fields, out);
  } else if (event == kKernelDecisionEvent) {
    ParseKernelDecision(fields, out);
  } else if (event == kKernelTickEvent) {
    ParseKernelTick(fields, out);
  } else if (line.find("sched_") == std::string_view::npos &&
             line.find(kKernelDecisionEvent) == std::string_view::npos &&
             line.find(kNewTaskEvent) == std::string_view::npos) {
    out = TraceLine();  // kNotScheduler, header not kept
  } else {
    out.kind = event.substr(0, 6) == "sched_" ? Kind::kOtherSched
                                              : Kind::kNotScheduler;
  }
  return out;
}

}  // namespace schedcache
