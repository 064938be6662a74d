// ErrnoError: the one way a failed system call becomes an absl::Status.
#ifndef SCHEDCACHE_COMMON_ERRNO_STATUS_H_
#define SCHEDCACHE_COMMON_ERRNO_STATUS_H_

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace schedcache {

// ErrnoError is a status of `code` whose message is "WHAT: REASON", REASON
// being errno `err`'s text. `what` names the call and the object it failed
// on (a path, a map), so the message stands alone. The caller picks the
// code, since the same errno means different things to different callers
// (a missing file is NOT_FOUND to a reader, UNAVAILABLE to a server that
// cannot start); absl::ErrnoToStatusCode(err) is the code when nothing
// better is known. REQUIRES: `err` is read right after the failed call.
inline absl::Status ErrnoError(absl::StatusCode code, absl::string_view what,
                               int err) {
  return absl::Status(code, absl::StrCat(what, ": ", std::strerror(err)));
}

}  // namespace schedcache

#endif  // SCHEDCACHE_COMMON_ERRNO_STATUS_H_
