// A reader process: a fresh copy of this program that reads one request,
// answers it and exits, so that a library crashing on hostile input takes
// down only that copy. hwloc 2.9's XML import dereferences NULL on some
// well-formed XML (found by topology_xml_fuzzer); topology_source.cc runs it
// this way.
//
// The copy is this program itself (/proc/self/exe), started with an
// environment marker naming the service; a static constructor of the library
// that offers the service (ServeIfReaderProcess) answers before main() runs,
// so every binary that links the library can be its own reader, and no
// helper binary has to be found on disk.
//
// Thread contract: Call is thread-safe; each call starts its own process.
#ifndef SCHEDCACHE_TOPOLOGY_READER_PROCESS_H_
#define SCHEDCACHE_TOPOLOGY_READER_PROCESS_H_

#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace schedcache::reader_process {

// Call starts a reader process, sends it `request` and returns its answer.
// The process has `timeout` to answer; after that it is killed. Errors:
//   DeadlineExceeded  no answer within `timeout`;
//   Aborted           the process was killed by a signal (a crash) or
//                     exited with a non-zero status (a sanitizer's report);
//   Internal          it could not be started (no /proc/self/exe, no
//                     processes left) or the pipe to it failed.
// The messages say which, with the signal or status.
absl::StatusOr<std::string> Call(absl::string_view service,
                                 absl::string_view request,
                                 absl::Duration timeout);

// ServeIfReaderProcess returns at once in a normal process and in a reader
// process for another service. In a process that Call started for
// `service`, it reads the request from stdin, writes serve(request) to
// stdout and exits with status 0 without running any destructor or exit
// handler. The process dies with its parent, has no file descriptors beyond
// stdin, stdout and a /dev/null stderr, and (outside sanitizer builds, whose
// shadow memory needs terabytes of address space) at most 4 GiB of address
// space, so an input that makes the library allocate without bound fails
// there.
void ServeIfReaderProcess(
    absl::string_view service,
    absl::FunctionRef<std::string(absl::string_view request)> serve);

}  // namespace schedcache::reader_process

#endif  // SCHEDCACHE_TOPOLOGY_READER_PROCESS_H_
