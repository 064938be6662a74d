#include "bench/ingest_load.h"

#include <time.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/proto_buffer_reader.h>
#include <grpcpp/support/slice.h>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "client/lib/columns_encoder.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"
#include "policies/builtin_policies.h"
#include "schedcache/client.h"
#include "schedcache/v1/schedcache.grpc.pb.h"

namespace schedcache {
namespace {

// Batches is the stream as columnar IngestBatch messages, each
// `batch_samples` sample rows plus the hand-over rows between them,
// serialised once, by one encoder as one stream would be (a process's comm
// in the first batch only). Times are delta coded from row 0, so shifting a
// batch by a pass changes row 0 only. In the packed form a batch is sent as
// a small head, serialised per send (the session and row 0's time),
// followed by `tail`, the rest of the batch serialised at start: protobuf
// parses concatenated messages as one merged message, and merging appends
// repeated fields, so head + tail is the whole batch with row 0 first. In
// the fixed-width form a bytes field is not appended to but replaced, so
// `tail` is the whole batch and each send copies it and writes row 0's
// time over its 8 bytes at `row0_offset`.
struct Batches {
  std::vector<grpc::Slice> tail;
  std::vector<int64_t> row0_ns;      // row 0's unshifted time
  std::vector<size_t> row0_offset;   // fixed-width form: row 0 in `tail`
  std::vector<int64_t> events;       // rows, per batch
  std::vector<int64_t> samples;      // sample rows, per batch
  client::ColumnsForm form = client::ColumnsForm::kPacked;
};

// kRow0Marker stands for row 0's time while a fixed-width batch is
// serialised, so its place in the bytes can be found; any value does that
// occurs once in the batch.
constexpr uint64_t kRow0Marker = 0x5ced'cace'7e57'ab1e;

// LittleEndianBytes is `value` as a fixed-width column stores it.
std::string LittleEndianBytes(uint64_t value) {
  std::string bytes(8, '\0');
  for (char& byte : bytes) {
    byte = static_cast<char>(value & 0xff);
    value >>= 8;
  }
  return bytes;
}

// TakeRow0 removes row 0's time from `batch`'s columns (packed form), or
// replaces it with kRow0Marker (fixed-width form), and returns it.
int64_t TakeRow0(v1::EventColumns& columns, client::ColumnsForm form) {
  if (form == client::ColumnsForm::kPacked) {
    google::protobuf::RepeatedField<int64_t>& times =
        *columns.mutable_timestamp_delta_ns();
    const int64_t row0 = times[0];
    times.erase(times.begin());
    return row0;
  }
  std::string& times = *columns.mutable_timestamp_delta_ns_le();
  uint64_t row0 = 0;
  for (int i = 7; i >= 0; --i) {
    row0 = (row0 << 8) | static_cast<unsigned char>(times[i]);
  }
  times.replace(0, 8, LittleEndianBytes(kRow0Marker));
  return static_cast<int64_t>(row0);
}

absl::StatusOr<Batches> Encode(const RecordedStream& stream,
                               int batch_samples, client::ColumnsForm form) {
  Batches out;
  out.form = form;
  const std::vector<RecordingSink::Event>& events = stream.events;
  v1::IngestBatch batch;
  client::ColumnsEncoder encoder(*batch.mutable_columns(), form);
  size_t begin = 0;
  for (const size_t end : BatchEnds(stream, batch_samples)) {
    encoder.Clear();
    int64_t samples = 0;
    for (size_t i = begin; i < end; ++i) {
      samples += std::holds_alternative<Sample>(events[i]) ? 1 : 0;
      std::visit([&encoder](const auto& e) { encoder.Add(e); }, events[i]);
    }
    begin = end;
    out.events.push_back(encoder.rows());
    out.samples.push_back(samples);
    out.row0_ns.push_back(TakeRow0(*batch.mutable_columns(), form));
    std::string bytes = batch.SerializeAsString();
    if (form == client::ColumnsForm::kFixedWidth) {
      const std::string marker = LittleEndianBytes(kRow0Marker);
      const size_t at = bytes.find(marker);
      if (at == std::string::npos || bytes.rfind(marker) != at) {
        return absl::InternalError(absl::StrCat(
            "batch ", out.tail.size(), ": row 0's marker is not once in it"));
      }
      out.row0_offset.push_back(at);
    }
    out.tail.emplace_back(bytes);
  }
  return out;
}

// BatchBytes is batch `b` of a pass, row 0 shifted by `shift_ns`, naming
// `session` (empty: the stream's session, after its first batch).
grpc::ByteBuffer BatchBytes(const Batches& batches, size_t b, int64_t shift_ns,
                            const std::string& session) {
  v1::IngestBatch head;
  head.set_session(session);
  const uint64_t row0 = static_cast<uint64_t>(batches.row0_ns[b] + shift_ns);
  if (batches.form == client::ColumnsForm::kPacked) {
    head.mutable_columns()->add_timestamp_delta_ns(static_cast<int64_t>(row0));
    grpc::Slice slices[] = {grpc::Slice(head.SerializeAsString()),
                            batches.tail[b]};
    return grpc::ByteBuffer(slices, 2);
  }
  std::string whole(reinterpret_cast<const char*>(batches.tail[b].begin()),
                    batches.tail[b].size());
  whole.replace(batches.row0_offset[b], 8, LittleEndianBytes(row0));
  grpc::Slice slices[] = {grpc::Slice(head.SerializeAsString()),
                          grpc::Slice(std::move(whole))};
  return grpc::ByteBuffer(slices, 2);
}

// IngestCall is one Ingest call through gRPC's generic stub, which sends
// bytes as given: the batches are serialised once, not on every send.
// Blocking, one operation at a time.
class IngestCall {
 public:
  explicit IngestCall(const std::string& address)
      : stub_(RpcProbe::MakeChannel(address)),
        call_(stub_.PrepareCall(&context_, kIngestMethod, &queue_)) {
    call_->StartCall(this);
    ok_ = Wait();
  }
  ~IngestCall() {
    queue_.Shutdown();
    void* tag;
    bool ok;
    while (queue_.Next(&tag, &ok)) {
    }
  }

  // Write sends one batch; false once the call has failed (Finish says
  // why).
  bool Write(const grpc::ByteBuffer& batch) {
    if (ok_) {
      call_->Write(batch, this);
      ok_ = Wait();
    }
    return ok_;
  }

  // Finish closes the stream and returns the server's summary or status.
  absl::StatusOr<v1::IngestSummary> Finish() {
    grpc::ByteBuffer response;
    if (ok_) {
      call_->WritesDone(this);
      if (Wait()) {
        call_->Read(&response, this);
        Wait();
      }
    }
    grpc::Status status;
    call_->Finish(&status, this);
    Wait();
    if (!status.ok()) return ToAbslStatus(status);
    v1::IngestSummary summary;
    grpc::ProtoBufferReader reader(&response);
    if (!summary.ParseFromZeroCopyStream(&reader)) {
      return absl::DataLossError("unreadable IngestSummary");
    }
    return summary;
  }

 private:
  static constexpr char kIngestMethod[] = "/schedcache.v1.SchedCache/Ingest";

  bool Wait() {
    void* tag;
    bool ok = false;
    return queue_.Next(&tag, &ok) && ok;
  }

  grpc::GenericStub stub_;
  grpc::ClientContext context_;
  grpc::CompletionQueue queue_;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call_;
  bool ok_ = false;
};

// ThreadCpuTime is the CPU time the calling thread has used.
absl::Duration ThreadCpuTime() {
  timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return absl::DurationFromTimespec(now);
}

struct StreamResult {
  absl::Status status;
  int64_t events = 0;
  int64_t samples = 0;
  int64_t accepted = 0;
  int64_t rejected = 0;
};

// RunStream sends passes of `batches` to `session` until `end`, at most
// `events_per_second` (0: unlimited).
StreamResult RunStream(const std::string& address, const std::string& session,
                       const Batches& batches, int64_t pass_ns, absl::Time end,
                       double events_per_second) {
  StreamResult result;
  IngestCall call(address);
  const absl::Time start = absl::Now();
  bool first = true;
  for (int64_t pass = 0; absl::Now() < end; ++pass) {
    for (size_t b = 0; b < batches.tail.size() && absl::Now() < end; ++b) {
      if (!call.Write(BatchBytes(batches, b, pass * pass_ns,
                                 first ? session : ""))) {
        break;
      }
      first = false;
      result.events += batches.events[b];
      result.samples += batches.samples[b];
      if (events_per_second > 0) {
        const absl::Time due =
            start + absl::Seconds(static_cast<double>(result.events) /
                                  events_per_second);
        if (due > absl::Now()) absl::SleepFor(due - absl::Now());
      }
    }
  }
  absl::StatusOr<v1::IngestSummary> summary = call.Finish();
  result.status = summary.status();
  if (summary.ok()) {
    result.accepted = static_cast<int64_t>(summary->accepted());
    result.rejected = static_cast<int64_t>(summary->rejected());
  }
  return result;
}

// RunQueries alternates a Recommend for the Redis server of `session` and
// a health check, `per_second` pairs a second, until `end`.
void RunQueries(const std::string& address, const std::string& session,
                double per_second, absl::Time end, IngestLoadResult& result) {
  RpcProbe probe(RpcProbe::MakeChannel(address));
  v1::RecommendRequest request;
  request.set_session(session);
  request.set_tgid(kRedisServerTgid);
  std::vector<int64_t> recommend;
  std::vector<int64_t> health;
  const absl::Duration period = absl::Seconds(1.0 / per_second);
  for (absl::Time next = absl::Now(); next < end; next += period) {
    if (next > absl::Now()) absl::SleepFor(next - absl::Now());
    absl::Time t0 = absl::Now();
    absl::Status r = probe.Recommend(request, absl::Seconds(5));
    absl::Time t1 = absl::Now();
    absl::StatusOr<bool> h = probe.HealthServing(absl::Seconds(5));
    absl::Time t2 = absl::Now();
    // A process the session has not seen yet is NotFound: still a timed
    // answer, but not counted until the stream has reached it.
    if (r.ok()) recommend.push_back(absl::ToInt64Nanoseconds(t1 - t0));
    if (h.ok() && *h) health.push_back(absl::ToInt64Nanoseconds(t2 - t1));
    if ((!r.ok() && !absl::IsNotFound(r)) || !h.ok()) ++result.query_errors;
  }
  result.recommend = Summarize(std::move(recommend));
  result.health = Summarize(std::move(health));
}

}  // namespace

std::vector<size_t> BatchEnds(const RecordedStream& stream,
                              int batch_samples) {
  std::vector<size_t> ends;
  int samples = 0;
  for (size_t i = 0; i < stream.events.size(); ++i) {
    if (!std::holds_alternative<Sample>(stream.events[i])) continue;
    // A batch ends just before the sample that would be its B+1st, so it
    // takes the hand-overs and exits that follow its last sample.
    if (samples == batch_samples) {
      ends.push_back(i);
      samples = 0;
    }
    ++samples;
  }
  if (!stream.events.empty()) ends.push_back(stream.events.size());
  return ends;
}

absl::StatusOr<absl::Duration> EngineCpuPerSample(
    const RecordedStream& stream, const std::vector<std::string>& policies,
    int batch_samples, int passes) {
  if (passes < 1 || stream.samples == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the engine reference needs a pass (", passes, ") over samples (",
        stream.samples, ")"));
  }
  ASSIGN_OR_RETURN(const PolicyRegistry registry, BuildPolicyRegistry({}));
  const std::vector<size_t> ends = BatchEnds(stream, batch_samples);
  const absl::Span<const Event> events(stream.events);
  absl::Duration cpu;
  for (int pass = 0; pass < passes; ++pass) {
    ASSIGN_OR_RETURN(std::unique_ptr<Engine> engine,
                     MakeEngine(stream.topology, registry, policies,
                                ScanTrigger::kTick));
    absl::Status first_error;
    const absl::Duration before = ThreadCpuTime();
    size_t begin = 0;
    for (const size_t end : ends) {
      engine->ApplyBatch(events.subspan(begin, end - begin),
                         [&](size_t, const absl::Status& error) {
                           first_error.Update(error);
                         });
      begin = end;
    }
    cpu += ThreadCpuTime() - before;
    RETURN_IF_ERROR(first_error);
  }
  return cpu / (static_cast<double>(stream.samples) * passes);
}

absl::StatusOr<IngestLoadResult> RunIngestLoad(
    const RecordedStream& stream, const IngestLoadOptions& options) {
  client::Options client_options;
  client_options.address = options.address;
  std::unique_ptr<client::Client> admin = client::Client::Connect(client_options);
  std::vector<std::string> sessions;
  client::ColumnsForm form = client::ColumnsForm::kPacked;
  for (int i = 0; i < options.streams; ++i) {
    v1::CreateSessionRequest request;
    request.set_name(absl::StrCat("bench-", getpid(), "-", i));
    request.mutable_topology()->set_spec(options.topology);
    for (const std::string& p : options.policies) request.add_policies(p);
    request.set_trigger(v1::SCAN_TRIGGER_TICK);
    ASSIGN_OR_RETURN(v1::Session session, admin->CreateSession(request));
    sessions.push_back(session.name());
    // The form a client library would send this server (Client::StartIngest).
    if (session.takes_fixed_width_columns()) {
      form = client::ColumnsForm::kFixedWidth;
    }
  }
  ASSIGN_OR_RETURN(const Batches batches,
                   Encode(stream, options.batch_samples, form));
  // A pass spans the stream plus an epoch, so the next pass starts later.
  const int64_t pass_ns =
      stream.last_timestamp_ns - stream.first_timestamp_ns + 10'000'000;
  std::vector<StreamResult> results(sessions.size());
  IngestLoadResult out;
  const absl::Time start = absl::Now();
  const absl::Time end = start + options.duration;
  {
    std::vector<std::thread> threads;
    for (size_t i = 0; i < sessions.size(); ++i) {
      threads.emplace_back([&, i] {
        results[i] = RunStream(options.address, sessions[i], batches, pass_ns,
                               end, options.events_per_second / options.streams);
      });
    }
    if (options.queries_per_second > 0) {
      threads.emplace_back([&] {
        RunQueries(options.address, sessions[0], options.queries_per_second,
                   end, out);
      });
    }
    for (std::thread& t : threads) t.join();
  }
  out.elapsed = absl::Now() - start;
  absl::Status first_error;
  for (const StreamResult& r : results) {
    first_error.Update(r.status);
    out.events_sent += r.events;
    out.samples_sent += r.samples;
    out.accepted += r.accepted;
    out.rejected += r.rejected;
  }
  for (const std::string& name : sessions) {
    first_error.Update(admin->DeleteSession(name));
  }
  if (!first_error.ok()) return first_error;
  return out;
}

}  // namespace schedcache
