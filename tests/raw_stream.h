// RawStream: one server-streaming call made on the generated stub itself,
// for tests that check the stream message by message (the client library
// would hide what they check).
#ifndef SCHEDCACHE_TESTS_RAW_STREAM_H_
#define SCHEDCACHE_TESTS_RAW_STREAM_H_

#include <climits>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include <grpcpp/client_context.h>
#include <grpcpp/support/sync_stream.h>

#include "absl/status/status.h"
#include "common/grpc_status.h"

namespace schedcache::test_support {

// Attached (initial metadata received) or refused once constructed;
// cancelled when destroyed unfinished.
template <typename Response>
class RawStream {
 public:
  using Open = std::function<std::unique_ptr<grpc::ClientReader<Response>>(
      grpc::ClientContext*)>;

  explicit RawStream(const Open& open) : reader_(open(&context_)) {
    reader_->WaitForInitialMetadata();
  }
  ~RawStream() {
    if (!finished_) {
      context_.TryCancel();
      reader_->Finish().ok();
    }
  }
  RawStream(const RawStream&) = delete;
  RawStream& operator=(const RawStream&) = delete;

  // Read returns the next `n` messages; fewer when the stream ends.
  std::vector<Response> Read(int n) {
    std::vector<Response> read;
    Response response;
    while (static_cast<int>(read.size()) < n && reader_->Read(&response)) {
      read.push_back(response);
    }
    return read;
  }
  // ReadToEnd returns every message left and how the stream ended.
  std::pair<std::vector<Response>, absl::Status> ReadToEnd() {
    std::vector<Response> read = Read(INT_MAX);
    finished_ = true;
    return {std::move(read), ToAbslStatus(reader_->Finish())};
  }

 private:
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReader<Response>> reader_;
  bool finished_ = false;
};

}  // namespace schedcache::test_support

#endif  // SCHEDCACHE_TESTS_RAW_STREAM_H_
