#include "schedcache/client.h"

#include <optional>
#include <string>
#include <thread>
#include <utility>

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include "absl/base/thread_annotations.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/optional.h"
#include "client/lib/columns_encoder.h"
#include "common/grpc_status.h"
#include "common/service_defaults.h"

namespace schedcache::client {
namespace {

template <typename Request, typename Response>
using UnaryMethod = grpc::Status (v1::SchedCache::Stub::*)(
    grpc::ClientContext*, const Request&, Response*);

// Call runs one unary RPC with the client's deadline.
template <typename Request, typename Response>
absl::StatusOr<Response> Call(v1::SchedCache::Stub& stub,
                              const Options& options,
                              UnaryMethod<Request, Response> method,
                              const Request& request) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + options.deadline));
  Response response;
  const grpc::Status status = (stub.*method)(&context, request, &response);
  if (!status.ok()) return ToAbslStatus(status);
  return response;
}

// Credentials secures the channel as `tls` says (plain when unset) and
// sets the name the server's certificate is checked against.
std::shared_ptr<grpc::ChannelCredentials> Credentials(
    const std::optional<TlsOptions>& tls, grpc::ChannelArguments& arguments) {
  if (!tls.has_value()) return grpc::InsecureChannelCredentials();
  if (!tls->server_name.empty()) {
    arguments.SetSslTargetNameOverride(tls->server_name);
  }
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = tls->root_certs;
  ssl.pem_cert_chain = tls->cert_chain;
  ssl.pem_private_key = tls->private_key;
  return grpc::SslCredentials(ssl);
}

// kIngestSummaryPayload is the absl::Status payload type URL of a failed
// Ingest stream's summary.
constexpr char kIngestSummaryPayload[] =
    "type.googleapis.com/schedcache.v1.IngestSummary";

}  // namespace

std::optional<v1::IngestSummary> IngestSummaryOf(const absl::Status& status) {
  const absl::optional<absl::Cord> payload =
      status.GetPayload(kIngestSummaryPayload);
  v1::IngestSummary summary;
  if (!payload.has_value() || !summary.ParseFromString(std::string(*payload))) {
    return std::nullopt;
  }
  return summary;
}

Client::Client(Options options, std::unique_ptr<v1::SchedCache::Stub> stub,
               std::shared_ptr<grpc::Channel> channel)
    : options_(std::move(options)),
      channel_(std::move(channel)),
      stub_(std::move(stub)) {}

std::unique_ptr<Client> Client::Connect(const Options& options) {
  grpc::ChannelArguments arguments;
  std::shared_ptr<grpc::ChannelCredentials> credentials =
      Credentials(options.tls, arguments);
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateCustomChannel(options.address, credentials, arguments);
  auto stub = v1::SchedCache::NewStub(channel);
  return std::unique_ptr<Client>(
      new Client(options, std::move(stub), std::move(channel)));
}

absl::Status Client::WaitForReady() const {
  if (channel_->WaitForConnected(
          absl::ToChronoTime(absl::Now() + options_.deadline))) {
    return absl::OkStatus();
  }
  return absl::DeadlineExceededError(
      absl::StrCat("no schedcached answers on ", options_.address, " within ",
                   absl::FormatDuration(options_.deadline)));
}

absl::StatusOr<v1::GetTopologyResponse> Client::GetTopology(
    absl::string_view session) const {
  v1::GetTopologyRequest request;
  request.set_session(std::string(session));
  return Call<v1::GetTopologyRequest, v1::GetTopologyResponse>(
      *stub_, options_, &v1::SchedCache::Stub::GetTopology, request);
}

absl::StatusOr<v1::ListPoliciesResponse> Client::ListPolicies() const {
  return Call<v1::ListPoliciesRequest, v1::ListPoliciesResponse>(
      *stub_, options_, &v1::SchedCache::Stub::ListPolicies, v1::ListPoliciesRequest());
}

absl::StatusOr<v1::Session> Client::CreateSession(
    const v1::CreateSessionRequest& request) const {
  return Call<v1::CreateSessionRequest, v1::Session>(
      *stub_, options_, &v1::SchedCache::Stub::CreateSession, request);
}

absl::StatusOr<v1::Session> Client::GetSession(
    absl::string_view session) const {
  v1::GetSessionRequest request;
  request.set_session(std::string(session));
  return Call<v1::GetSessionRequest, v1::Session>(
      *stub_, options_, &v1::SchedCache::Stub::GetSession, request);
}

absl::StatusOr<v1::ListSessionsResponse> Client::ListSessions() const {
  return Call<v1::ListSessionsRequest, v1::ListSessionsResponse>(
      *stub_, options_, &v1::SchedCache::Stub::ListSessions, v1::ListSessionsRequest());
}

absl::Status Client::DeleteSession(absl::string_view session) const {
  v1::DeleteSessionRequest request;
  request.set_session(std::string(session));
  return Call<v1::DeleteSessionRequest, v1::DeleteSessionResponse>(
             *stub_, options_, &v1::SchedCache::Stub::DeleteSession, request)
      .status();
}

absl::StatusOr<v1::RecommendResponse> Client::Recommend(
    const v1::RecommendRequest& request) const {
  return Call<v1::RecommendRequest, v1::RecommendResponse>(
      *stub_, options_, &v1::SchedCache::Stub::Recommend, request);
}

absl::StatusOr<v1::Report> Client::GetReport(absl::string_view session) const {
  v1::GetReportRequest request;
  request.set_session(std::string(session));
  return Call<v1::GetReportRequest, v1::Report>(
      *stub_, options_, &v1::SchedCache::Stub::GetReport, request);
}

// IngestWriter::Impl owns the stream and the batch, whose events it encodes
// as columns (the compact form of the API). A timer thread sends a batch
// that has waited max_delay; mu_ serialises it with Add.
class IngestWriter::Impl {
 public:
  Impl(v1::SchedCache::Stub& stub, absl::string_view session,
       const IngestOptions& options, ColumnsForm form)
      : options_(options), encoder_(*batch_.mutable_columns(), form) {
    writer_ = stub.Ingest(&context_, &summary_);
    batch_.set_session(std::string(session));
    timer_ = std::thread([this] { RunTimer(); });
  }

  ~Impl() {
    bool finished = false;
    {
      absl::MutexLock lock(&mu_);
      finished = finished_;
      if (!finished) context_.TryCancel();
      stopping_ = true;
      timer_cv_.Signal();
    }
    timer_.join();
    if (!finished) writer_->Finish().ok();  // reap the cancelled call
  }

  // Add takes a Sample, HandOver, ProcessExit, ProcessStart or
  // KernelDecision.
  template <typename EventValue>
  absl::Status Add(const EventValue& event) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    NoteAdd();
    encoder_.Add(event);
    return SendIfFull();
  }

  void AddLosses(const v1::CollectorLosses& losses) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    v1::CollectorLosses& pending = *batch_.mutable_collector_losses();
    pending.set_ring_buffer_lost(pending.ring_buffer_lost() +
                                 losses.ring_buffer_lost());
    pending.set_unparsed(pending.unparsed() + losses.unparsed());
    pending.set_late(pending.late() + losses.late());
  }

  absl::Status Flush() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return Send();
  }

  absl::StatusOr<v1::IngestSummary> Finish() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    if (finished_) {
      return absl::FailedPreconditionError("IngestWriter already finished");
    }
    Send().IgnoreError();  // a failed stream reports through Finish below
    writer_->WritesDone();
    finished_ = true;
    const grpc::Status status = writer_->Finish();
    if (!status.ok()) return WithAppliedSummary(ToAbslStatus(status));
    return summary_;
  }

 private:
  // NoteAdd starts the batch's delay when this event is its first.
  void NoteAdd() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (encoder_.rows() == 0) first_added_ = absl::Now();
  }

  absl::Status SendIfFull() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (encoder_.rows() < options_.max_batch_events) {
      if (encoder_.rows() == 1) timer_cv_.Signal();
      return absl::OkStatus();
    }
    return Send();
  }

  absl::Status Send() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_) {
      return absl::FailedPreconditionError("IngestWriter already finished");
    }
    if (broken_) {
      return absl::UnavailableError(
          "the Ingest stream failed; Finish() returns the server's status");
    }
    if (encoder_.rows() == 0 && !batch_.has_collector_losses()) {
      return absl::OkStatus();
    }
    if (!writer_->Write(batch_)) {  // blocks while the server catches up
      broken_ = true;
      return absl::UnavailableError(
          "the Ingest stream failed; Finish() returns the server's status");
    }
    // Only the first batch names the session; the encoder keeps the
    // columns' storage for reuse.
    batch_.clear_session();
    batch_.clear_collector_losses();
    encoder_.Clear();
    return absl::OkStatus();
  }

  // WithAppliedSummary adds to a failed stream's `status` the summary the
  // server sent in its trailers (see IngestSummaryOf).
  absl::Status WithAppliedSummary(absl::Status status) const {
    const auto& trailers = context_.GetServerTrailingMetadata();
    const auto it = trailers.find(kIngestSummaryTrailer);
    if (it != trailers.end()) {
      status.SetPayload(kIngestSummaryPayload,
                        absl::Cord(absl::string_view(it->second.data(),
                                                     it->second.size())));
    }
    return status;
  }

  void RunTimer() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    while (!stopping_ && !finished_) {
      if (encoder_.rows() == 0) {
        timer_cv_.Wait(&mu_);
        continue;
      }
      const absl::Time due = first_added_ + options_.max_delay;
      if (absl::Now() >= due) {
        Send().IgnoreError();  // Add/Finish report a broken stream
      } else {
        timer_cv_.WaitWithDeadline(&mu_, due);
      }
    }
  }

  const IngestOptions options_;
  grpc::ClientContext context_;
  v1::IngestSummary summary_;
  std::unique_ptr<grpc::ClientWriter<v1::IngestBatch>> writer_;
  std::thread timer_;

  absl::Mutex mu_;
  absl::CondVar timer_cv_;
  v1::IngestBatch batch_ ABSL_GUARDED_BY(mu_);
  ColumnsEncoder encoder_ ABSL_GUARDED_BY(mu_);  // of batch_.columns()
  absl::Time first_added_ ABSL_GUARDED_BY(mu_);
  bool broken_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

IngestWriter::IngestWriter(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
IngestWriter::~IngestWriter() = default;
absl::Status IngestWriter::Add(const Sample& sample) {
  return impl_->Add(sample);
}
absl::Status IngestWriter::Add(const HandOver& handover) {
  return impl_->Add(handover);
}
absl::Status IngestWriter::Add(const ProcessExit& exit) {
  return impl_->Add(exit);
}
absl::Status IngestWriter::Add(const ProcessStart& start) {
  return impl_->Add(start);
}
absl::Status IngestWriter::Add(const KernelDecision& decision) {
  return impl_->Add(decision);
}

void IngestWriter::AddLosses(const v1::CollectorLosses& losses) {
  impl_->AddLosses(losses);
}
absl::Status IngestWriter::Flush() { return impl_->Flush(); }
absl::StatusOr<v1::IngestSummary> IngestWriter::Finish() {
  return impl_->Finish();
}

std::unique_ptr<IngestWriter> Client::StartIngest(
    absl::string_view session, const IngestOptions& options) const {
  // The target's Session says whether the server reads the fixed-width
  // columns. A server that cannot say (one from before the field, or an
  // error such as no such session, which the stream then reports itself)
  // gets the packed form, which every server reads.
  const absl::StatusOr<v1::Session> target =
      GetSession(session.empty() ? kDefaultSessionName : session);
  const ColumnsForm form = target.ok() && target->takes_fixed_width_columns()
                               ? ColumnsForm::kFixedWidth
                               : ColumnsForm::kPacked;
  return std::unique_ptr<IngestWriter>(new IngestWriter(
      std::make_unique<IngestWriter::Impl>(*stub_, session, options, form)));
}

}  // namespace schedcache::client
