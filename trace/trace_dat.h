// Reads trace-cmd's binary .dat files (what `trace-cmd record` and
// `trace-cmd extract` write) through Debian's libtracecmd, record by record,
// as the TraceLines that ParseTraceLine makes of the same records' `trace-cmd
// report` text, so that trace replay treats both alike (trace_replay.h).
//
// Which records: those of every buffer the file holds (the top-level
// buffer and each tracefs instance's), merged in time order, as `trace-cmd
// report` lists them. Fields come from the event formats stored in the file
// (so a kernel that moves a field still reads), never from printed text:
// timestamps keep their nanoseconds, which `trace-cmd report` rounds to
// microseconds unless given -t.
//
// What a record becomes: sched_switch, sched_migrate_task and
// sched_process_exit the TraceLine kinds of the same name; another event of
// the "sched" system kOtherSched; any other event kNotScheduler. A record
// too short for its format, or with a timestamp of 10^18 ns or more (what
// the text parser cannot read either), is kMalformed.
//
// Thread contract: each call is independent.
#ifndef SCHEDCACHE_TRACE_TRACE_DAT_H_
#define SCHEDCACHE_TRACE_TRACE_DAT_H_

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "trace/trace_line.h"

namespace schedcache {

// kTraceDatMagic is how every trace-cmd file begins: bytes 0x17 0x08 0x44
// and "tracing".
inline constexpr absl::string_view kTraceDatMagic = "\x17\x08\x44tracing";

// HasTraceDatMagic says whether the file at `path` begins with
// kTraceDatMagic. False for "-" (standard input cannot be looked at and
// then read again), for a file shorter than the magic and for one that
// cannot be opened: the text reader then reports what is wrong with it.
bool HasTraceDatMagic(absl::string_view path);

// ReadTraceDat calls `visit` with the TraceLine of each record of the
// trace-cmd file at `path`, in time order; the line's views are valid
// during the call only. Stops at the first error `visit` returns and
// returns it. Otherwise returns, each naming the file:
//  - InvalidArgument when it does not begin with kTraceDatMagic;
//  - DataLoss when libtracecmd cannot read it (truncated or corrupt) or
//    fails part-way through its records (saying after how many);
//  - FailedPrecondition when it holds none of the sched_switch,
//    sched_migrate_task and sched_process_exit event formats (it was
//    captured without them);
//  - InvalidArgument when one of those formats lacks a field replay reads,
//    or has it in a size it does not read (naming event, field and size).
absl::Status ReadTraceDat(
    absl::string_view path,
    absl::FunctionRef<absl::Status(const TraceLine&)> visit);

}  // namespace schedcache

#endif  // SCHEDCACHE_TRACE_TRACE_DAT_H_
