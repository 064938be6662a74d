#include "client/lib/scripted_server.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <deque>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/service_defaults.h"

namespace schedcache::client {
namespace {

// Play runs `script` on one server stream.
template <typename Response>
grpc::Status Play(const StreamScript<Response>& script,
                  grpc::ServerContext& context,
                  grpc::ServerWriter<Response>& writer,
                  absl::Notification& released) {
  if (!script.attach) return script.end;
  context.AddInitialMetadata(kWatchAttachedMetadata, "1");
  writer.SendInitialMetadata();
  for (const Response& response : script.responses) writer.Write(response);
  if (script.hold) released.WaitForNotification();
  return script.end;
}

}  // namespace

class ScriptedServer::Service final : public v1::SchedCache::Service {
 public:
  grpc::Status Ingest(grpc::ServerContext* context,
                      grpc::ServerReader<v1::IngestBatch>* reader,
                      v1::IngestSummary* response) override {
    v1::IngestBatch batch;
    while (reader->Read(&batch)) {
      absl::MutexLock lock(&mu_);
      batches_.push_back(batch);
    }
    absl::MutexLock lock(&mu_);
    if (ingest_trailer_.has_value()) {
      context->AddTrailingMetadata(kIngestSummaryTrailer,
                                   ingest_trailer_->SerializeAsString());
    }
    *response = ingest_response_;
    return ingest_end_;
  }

  grpc::Status WatchPreferences(
      grpc::ServerContext* context,
      const v1::WatchPreferencesRequest* request,
      grpc::ServerWriter<v1::WatchPreferencesResponse>* writer) override {
    StreamScript<v1::WatchPreferencesResponse> script;
    {
      absl::MutexLock lock(&mu_);
      watch_requests_.push_back(*request);
      if (watches_.empty()) return NoScript();
      script = std::move(watches_.front());
      watches_.pop_front();
    }
    return Play(script, *context, *writer, released_);
  }

  grpc::Status WatchScans(
      grpc::ServerContext* context, const v1::WatchScansRequest* request,
      grpc::ServerWriter<v1::WatchScansResponse>* writer) override {
    StreamScript<v1::WatchScansResponse> script;
    {
      absl::MutexLock lock(&mu_);
      scan_requests_.push_back(*request);
      if (scan_watches_.empty()) return NoScript();
      script = std::move(scan_watches_.front());
      scan_watches_.pop_front();
    }
    return Play(script, *context, *writer, released_);
  }

  // Release lets every held stream end.
  void Release() { released_.Notify(); }

  absl::Mutex mu_;
  grpc::Status ingest_end_ ABSL_GUARDED_BY(mu_);
  v1::IngestSummary ingest_response_ ABSL_GUARDED_BY(mu_);
  std::optional<v1::IngestSummary> ingest_trailer_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::IngestBatch> batches_ ABSL_GUARDED_BY(mu_);
  std::deque<StreamScript<v1::WatchPreferencesResponse>> watches_
      ABSL_GUARDED_BY(mu_);
  std::vector<v1::WatchPreferencesRequest> watch_requests_
      ABSL_GUARDED_BY(mu_);
  std::deque<StreamScript<v1::WatchScansResponse>> scan_watches_
      ABSL_GUARDED_BY(mu_);
  std::vector<v1::WatchScansRequest> scan_requests_ ABSL_GUARDED_BY(mu_);

 private:
  static grpc::Status NoScript() {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "the test scripted no further stream");
  }

  absl::Notification released_;
};

ScriptedServer::ScriptedServer() : service_(std::make_unique<Service>()) {}

std::unique_ptr<ScriptedServer> ScriptedServer::Start() {
  static std::atomic<int> servers{0};
  std::unique_ptr<ScriptedServer> scripted(new ScriptedServer());
  scripted->path_ = absl::StrCat("/tmp/schedcache-client-test-", getpid(),
                                 "-", servers++, ".sock");
  std::remove(scripted->path_.c_str());
  scripted->address_ = absl::StrCat("unix:", scripted->path_);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(scripted->address_,
                           grpc::InsecureServerCredentials());
  builder.RegisterService(scripted->service_.get());
  scripted->server_ = builder.BuildAndStart();
  if (scripted->server_ == nullptr) return nullptr;
  return scripted;
}

ScriptedServer::~ScriptedServer() {
  service_->Release();
  if (server_ != nullptr) server_->Shutdown();
  std::remove(path_.c_str());
}

void ScriptedServer::AnswerIngest(grpc::Status end,
                                  v1::IngestSummary response,
                                  std::optional<v1::IngestSummary> trailer) {
  absl::MutexLock lock(&service_->mu_);
  service_->ingest_end_ = std::move(end);
  service_->ingest_response_ = std::move(response);
  service_->ingest_trailer_ = std::move(trailer);
}

std::vector<v1::IngestBatch> ScriptedServer::batches() const {
  absl::MutexLock lock(&service_->mu_);
  return service_->batches_;
}

void ScriptedServer::AddWatch(
    StreamScript<v1::WatchPreferencesResponse> script) {
  absl::MutexLock lock(&service_->mu_);
  service_->watches_.push_back(std::move(script));
}

std::vector<v1::WatchPreferencesRequest> ScriptedServer::watch_requests()
    const {
  absl::MutexLock lock(&service_->mu_);
  return service_->watch_requests_;
}

void ScriptedServer::AddScanWatch(StreamScript<v1::WatchScansResponse> script) {
  absl::MutexLock lock(&service_->mu_);
  service_->scan_watches_.push_back(std::move(script));
}

std::vector<v1::WatchScansRequest> ScriptedServer::scan_requests() const {
  absl::MutexLock lock(&service_->mu_);
  return service_->scan_requests_;
}

}  // namespace schedcache::client
