#include "bench/ingest_load.h"

#include <unistd.h>

#include <atomic>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "client/lib/event_convert.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"
#include "schedcache/client.h"
#include "schedcache/v1/schedcache.grpc.pb.h"

namespace schedcache {
namespace {

// Batches is the stream as IngestBatch messages, with each event's original
// timestamp kept so a pass can shift them.
struct Batches {
  std::vector<v1::IngestBatch> batches;
  std::vector<std::vector<int64_t>> timestamps;
  std::vector<int64_t> samples;  // per batch
};

Batches Encode(const RecordedStream& stream, int batch_events) {
  Batches out;
  for (const RecordingSink::Event& event : stream.events) {
    if (out.batches.empty() ||
        out.batches.back().events_size() == batch_events) {
      out.batches.emplace_back();
      out.timestamps.emplace_back();
      out.samples.push_back(0);
    }
    v1::Event* e = out.batches.back().add_events();
    if (const Sample* s = std::get_if<Sample>(&event)) {
      client::SampleToEvent(*s, *e);
      ++out.samples.back();
    } else {
      client::HandOverToEvent(std::get<HandOver>(event), *e);
    }
    out.timestamps.back().push_back(TimestampOf(event));
  }
  return out;
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
                       Batches batches, int64_t pass_ns, absl::Time end,
                       double events_per_second) {
  StreamResult result;
  auto stub = v1::SchedCache::NewStub(RpcProbe::MakeChannel(address));
  grpc::ClientContext context;
  v1::IngestSummary summary;
  auto writer = stub->Ingest(&context, &summary);
  const absl::Time start = absl::Now();
  bool first = true;
  for (int64_t pass = 0; absl::Now() < end; ++pass) {
    for (size_t b = 0; b < batches.batches.size() && absl::Now() < end; ++b) {
      v1::IngestBatch& batch = batches.batches[b];
      batch.set_session(first ? session : "");
      first = false;
      for (int i = 0; i < batch.events_size(); ++i) {
        batch.mutable_events(i)->set_timestamp_ns(batches.timestamps[b][i] +
                                                  pass * pass_ns);
      }
      if (!writer->Write(batch)) break;
      result.events += batch.events_size();
      result.samples += batches.samples[b];
      if (events_per_second > 0) {
        const absl::Time due =
            start + absl::Seconds(static_cast<double>(result.events) /
                                  events_per_second);
        if (due > absl::Now()) absl::SleepFor(due - absl::Now());
      }
    }
  }
  writer->WritesDone();
  result.status = ToAbslStatus(writer->Finish());
  result.accepted = static_cast<int64_t>(summary.accepted());
  result.rejected = static_cast<int64_t>(summary.rejected());
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

absl::StatusOr<IngestLoadResult> RunIngestLoad(
    const RecordedStream& stream, const IngestLoadOptions& options) {
  client::Options client_options;
  client_options.address = options.address;
  std::unique_ptr<client::Client> admin = client::Client::Connect(client_options);
  std::vector<std::string> sessions;
  for (int i = 0; i < options.streams; ++i) {
    v1::CreateSessionRequest request;
    request.set_name(absl::StrCat("bench-", getpid(), "-", i));
    request.mutable_topology()->set_spec(options.topology);
    for (const std::string& p : options.policies) request.add_policies(p);
    request.set_trigger(v1::SCAN_TRIGGER_TICK);
    ASSIGN_OR_RETURN(v1::Session session, admin->CreateSession(request));
    sessions.push_back(session.name());
  }
  const Batches batches = Encode(stream, options.batch_events);
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
