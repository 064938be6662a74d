#include "server/stream_limiter.h"

#include "absl/strings/str_cat.h"

namespace schedcache {

absl::Status StreamLimiter::Admit() {
  absl::MutexLock lock(&mu_);
  if (open_ >= max_streams_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("stream limit reached: ", max_streams_, " ", kind_,
                     " streams are open (flag ", flag_, ")"));
  }
  ++open_;
  return absl::OkStatus();
}

void StreamLimiter::Release() {
  absl::MutexLock lock(&mu_);
  --open_;
}

int StreamLimiter::open() const {
  absl::MutexLock lock(&mu_);
  return open_;
}

}  // namespace schedcache
