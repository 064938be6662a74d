// ScanWatch: one WatchScans stream, read to its end.
#include <memory>
#include <utility>

#include <grpcpp/client_context.h>

#include "common/grpc_status.h"
#include "common/service_defaults.h"
#include "schedcache/client.h"

namespace schedcache::client {

class ScanWatch::Impl {
 public:
  // Opens the stream and waits until it is attached or refused.
  Impl(v1::SchedCache::Stub& stub, absl::string_view session,
       const ScanWatchOptions& options) {
    v1::WatchScansRequest request;
    request.set_session(std::string(session));
    request.set_policy(options.policy);
    for (int32_t tgid : options.tgids) request.add_tgid(tgid);
    reader_ = stub.WatchScans(&context_, request);
    reader_->WaitForInitialMetadata();
    // A refused call ends trailers-only, without this key.
    attached_ =
        context_.GetServerInitialMetadata().count(kWatchAttachedMetadata) > 0;
  }
  ~Impl() {
    if (!ended_) {
      context_.TryCancel();
      reader_->Finish().ok();  // reap it
    }
  }

  bool attached() const { return attached_; }

  std::optional<v1::WatchScansResponse> Next() {
    if (ended_) return std::nullopt;
    v1::WatchScansResponse response;
    if (reader_->Read(&response)) return response;
    end_ = ToAbslStatus(reader_->Finish());
    ended_ = true;
    return std::nullopt;
  }

  absl::Status Finish() const { return end_; }

  // grpc::ClientContext::TryCancel is thread-safe.
  void Cancel() { context_.TryCancel(); }

 private:
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReader<v1::WatchScansResponse>> reader_;
  bool attached_ = false;
  bool ended_ = false;
  absl::Status end_;
};

ScanWatch::ScanWatch(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ScanWatch::~ScanWatch() = default;
bool ScanWatch::attached() const { return impl_->attached(); }
std::optional<v1::WatchScansResponse> ScanWatch::Next() {
  return impl_->Next();
}
absl::Status ScanWatch::Finish() const { return impl_->Finish(); }
void ScanWatch::Cancel() { impl_->Cancel(); }

std::unique_ptr<ScanWatch> Client::WatchScans(
    absl::string_view session, const ScanWatchOptions& options) const {
  return std::unique_ptr<ScanWatch>(new ScanWatch(
      std::make_unique<ScanWatch::Impl>(*stub_, session, options)));
}

}  // namespace schedcache::client
