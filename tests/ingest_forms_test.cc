// The forms of an IngestBatch through a real server (Unix socket): the
// client library's columns, the packed columns of clients from before the
// fixed-width form, and plain Event messages (as python or grpcurl send
// them) give the same summary and report; a batch's form errors end
// the stream with INVALID_ARGUMENT naming the fields; bad rows are rejected
// one by one, counted across batches.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "client/lib/columns_encoder.h"
#include "common/grpc_status.h"
#include "events/event.h"
#include "google/protobuf/unknown_field_set.h"
#include "google/protobuf/util/message_differencer.h"
#include "schedcache/v1/schedcache.grpc.pb.h"
#include "tests/server_fixture.h"

namespace schedcache::test_support {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kMs = 1'000'000;

// Workload: two processes that come to prefer an LLC, hand-overs, every
// optional attribute on some samples, and bad events among them.
std::vector<Event> Workload() {
  std::vector<Event> events;
  for (const Sample& s : PreferLlc0Events(10, 1000)) events.push_back(s);
  Sample named = SampleAt(30 * kMs, 2, 20, 21, 2 * kMs, true, /*nr_threads=*/3);
  named.comm.Assign("worker");
  named.numa_node = -1;
  named.footprint_pages = 100;
  events.push_back(named);
  events.push_back(HandOver{.timestamp_ns = 31 * kMs, .cpu = 3, .tgid = 20,
                            .tid = 22});
  events.push_back(SampleAt(32 * kMs, 9, 20, 22, kMs, true));  // bad cpu
  events.push_back(SampleAt(52 * kMs, 3, 20, 22, kMs, true));
  events.push_back(SampleAt(53 * kMs, 2, 0, 21, kMs, true));       // bad tgid
  events.push_back(HandOver{.timestamp_ns = 54 * kMs, .cpu = 3});  // idle
  for (int i = 0; i < 20; ++i) {
    events.push_back(
        SampleAt((60 + 5 * i) * kMs, i % 4, 20, 21 + i % 2, kMs, true));
  }
  return events;
}

// EventMessage is `sample` as the Event message a python or grpcurl client
// writes, field by field (only the attributes it changes).
v1::Event EventMessage(const Sample& sample) {
  v1::Event event;
  event.set_timestamp_ns(sample.timestamp_ns);
  event.set_cpu(sample.cpu);
  event.set_tgid(sample.tgid);
  event.set_tid(sample.tid);
  event.set_delta_ns(sample.delta_ns);
  event.set_tick(sample.tick);
  if (sample.nr_threads != kUnchangedNrThreads) {
    event.set_nr_threads(sample.nr_threads);
  }
  if (sample.numa_node != kUnchangedNumaNode) {
    event.set_numa_node(sample.numa_node);
  }
  if (sample.footprint_pages != kUnchangedFootprint) {
    event.set_footprint_pages(sample.footprint_pages);
  }
  event.set_comm(std::string(sample.comm.view()));
  return event;
}

// EventMessage is `handover` as the Event message a client writes.
v1::Event EventMessage(const HandOver& handover) {
  v1::Event event;
  event.set_timestamp_ns(handover.timestamp_ns);
  event.set_cpu(handover.cpu);
  event.set_tgid(handover.tgid);
  event.set_tid(handover.tid);
  event.set_handover(true);
  return event;
}

// EventMessage is `exit` as the Event message a client writes.
v1::Event EventMessage(const ProcessExit& exit) {
  v1::Event event;
  event.set_timestamp_ns(exit.timestamp_ns);
  event.set_tgid(exit.tgid);
  event.set_process_exit(true);
  return event;
}

// EventMessage is `start` as the Event message a client writes.
v1::Event EventMessage(const ProcessStart& start) {
  v1::Event event;
  event.set_timestamp_ns(start.timestamp_ns);
  event.set_tgid(start.tgid);
  event.set_process_start(true);
  return event;
}

// EventMessage is `decision` as the Event message a client writes.
v1::Event EventMessage(const KernelDecision& decision) {
  v1::Event event;
  event.set_timestamp_ns(decision.timestamp_ns);
  event.set_cpu(decision.cpu);
  event.set_tgid(decision.tgid);
  event.set_tid(decision.tid);
  v1::KernelDecisionFields& fields = *event.mutable_kernel_decision();
  fields.set_preferred_cpu(decision.preferred_cpu);
  fields.set_scanned(decision.scanned);
  fields.set_nr_running_avg(decision.nr_running_avg);
  fields.set_footprint(decision.footprint);
  fields.set_group(decision.group);
  fields.set_jiffies(decision.jiffies);
  fields.set_group_epoch(decision.group_epoch);
  fields.set_next_scan(decision.next_scan);
  fields.set_cpu_epoch(decision.cpu_epoch);
  fields.set_cpu_epoch_next(decision.cpu_epoch_next);
  return event;
}

// IngestEvents sends `events` in batches of `batch` Event messages.
absl::StatusOr<v1::IngestSummary> IngestEvents(
    const std::string& address, const std::string& session,
    const std::vector<Event>& events, int batch) {
  auto stub = v1::SchedCache::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  v1::IngestSummary summary;
  auto writer = stub->Ingest(&context, &summary);
  for (size_t first = 0; first < events.size(); first += batch) {
    v1::IngestBatch message;
    if (first == 0) message.set_session(session);
    for (size_t i = first; i < events.size() && i < first + batch; ++i) {
      *message.add_events() =
          std::visit([](const auto& e) { return EventMessage(e); }, events[i]);
    }
    if (!writer->Write(message)) break;
  }
  writer->WritesDone();
  const grpc::Status status = writer->Finish();
  if (!status.ok()) return ToAbslStatus(status);
  return summary;
}

// IngestBatches sends hand-made batches as they are.
absl::StatusOr<v1::IngestSummary> IngestBatches(
    const std::string& address, const std::vector<v1::IngestBatch>& batches) {
  auto stub = v1::SchedCache::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  v1::IngestSummary summary;
  auto writer = stub->Ingest(&context, &summary);
  for (const v1::IngestBatch& batch : batches) {
    if (!writer->Write(batch)) break;
  }
  writer->WritesDone();
  const grpc::Status status = writer->Finish();
  if (!status.ok()) return ToAbslStatus(status);
  return summary;
}

// Columns encodes `events` as one columnar batch.
v1::IngestBatch Columns(const std::vector<Event>& events) {
  v1::IngestBatch batch;
  client::ColumnsEncoder encoder(*batch.mutable_columns());
  for (const Event& event : events) {
    std::visit([&encoder](const auto& e) { encoder.Add(e); }, event);
  }
  return batch;
}

class IngestFormsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<TestServer>> server =
        TestServer::Start(Transport::kUnix);
    ASSERT_TRUE(server.ok()) << server.status();
    test_ = *std::move(server);
  }
  const client::Client& client() const { return *test_->client; }
  const std::string& address() const {
    return test_->server->addresses().front();
  }
  void CreateSession(const std::string& name) {
    ASSERT_TRUE(client().CreateSession(TwoLlcSessionRequest(name)).ok());
  }
  // ReportWithoutTimes is the session's report with what differs between
  // two equal runs cleared: its name and the scans' wall times.
  v1::Report ReportWithoutTimes(const std::string& session) {
    absl::StatusOr<v1::Report> report = client().GetReport(session);
    EXPECT_TRUE(report.ok()) << report.status();
    report->clear_session();
    for (v1::PolicyReport& policy : *report->mutable_policies()) {
      policy.clear_scan_ns();
    }
    return *report;
  }

  // BothForms is what the two streams of IngestInBothForms answered.
  struct BothForms {
    v1::IngestSummary columns;
    v1::IngestSummary events;
  };
  // IngestInBothForms creates sessions "columns" and "events" and sends
  // `events` to the first as one columnar batch, whose row 2 must be of
  // `row2_kind` (the kind a test is about), and to the second as Event
  // messages, 2 per batch. nullopt, with a failure, when a stream fails.
  std::optional<BothForms> IngestInBothForms(const std::vector<Event>& events,
                                             v1::EventKind row2_kind) {
    CreateSession("columns");
    CreateSession("events");
    v1::IngestBatch batch = Columns(events);
    batch.set_session("columns");
    EXPECT_EQ(batch.columns().kind(2), row2_kind);
    absl::StatusOr<v1::IngestSummary> columns =
        IngestBatches(address(), {batch});
    EXPECT_TRUE(columns.ok()) << columns.status();
    absl::StatusOr<v1::IngestSummary> plain =
        IngestEvents(address(), "events", events, 2);
    EXPECT_TRUE(plain.ok()) << plain.status();
    if (!columns.ok() || !plain.ok()) return std::nullopt;
    return BothForms{*std::move(columns), *std::move(plain)};
  }

  std::unique_ptr<TestServer> test_;
};

TEST_F(IngestFormsTest, ColumnsAndEventsGiveTheSameSummaryAndReport) {
  CreateSession("columns");
  CreateSession("events");
  const std::vector<Event> events = Workload();
  // Columns through the client library, in batches of 4 rows.
  client::IngestOptions options;
  options.max_batch_events = 4;
  std::unique_ptr<client::IngestWriter> writer =
      client().StartIngest("columns", options);
  for (const Event& event : events) {
    ASSERT_TRUE(std::visit([&](const auto& e) { return writer->Add(e); },
                           event)
                    .ok());
  }
  absl::StatusOr<v1::IngestSummary> columns = writer->Finish();
  ASSERT_TRUE(columns.ok()) << columns.status();
  absl::StatusOr<v1::IngestSummary> plain =
      IngestEvents(address(), "events", events, 3);
  ASSERT_TRUE(plain.ok()) << plain.status();

  EXPECT_EQ(columns->accepted(), events.size() - 2);
  EXPECT_EQ(columns->rejected(), 2u);
  ASSERT_EQ(columns->first_rejections_size(), 2);
  EXPECT_EQ(columns->first_rejections(0).index(), 4u);
  EXPECT_THAT(columns->first_rejections(0).reason(), HasSubstr("cpu 9"));
  EXPECT_EQ(columns->first_rejections(1).index(), 6u);
  columns->clear_batches();  // 4-row and 3-event batches differ in number
  plain->clear_batches();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*columns,
                                                                 *plain))
      << columns->DebugString() << "\nvs\n" << plain->DebugString();

  const v1::Report by_columns = ReportWithoutTimes("columns");
  const v1::Report by_events = ReportWithoutTimes("events");
  EXPECT_GT(by_columns.policies(0).scans(), 0u);
  EXPECT_EQ(by_columns.handovers_applied(), 2u);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(by_columns,
                                                                 by_events))
      << by_columns.DebugString() << "\nvs\n" << by_events.DebugString();
}

// PreviousClientBatches is `events` as the client library sent them before
// the fixed-width columns: packed columns, `batch` rows each, every batch
// encoded afresh, so each process's comm goes in every batch it is in.
std::vector<v1::IngestBatch> PreviousClientBatches(
    const std::string& session, const std::vector<Event>& events,
    size_t batch) {
  std::vector<v1::IngestBatch> batches;
  for (size_t first = 0; first < events.size(); first += batch) {
    const auto end = events.begin() + std::min(events.size(), first + batch);
    batches.push_back(
        Columns(std::vector<Event>(events.begin() + first, end)));
  }
  batches.front().set_session(session);
  return batches;
}

TEST_F(IngestFormsTest, PreviousColumnsAndFixedWidthGiveTheSameSummaryAndReport) {
  CreateSession("packed");
  CreateSession("fixed");
  // The library sends fixed-width columns because the Session says so.
  absl::StatusOr<v1::Session> fixed_session = client().GetSession("fixed");
  ASSERT_TRUE(fixed_session.ok()) << fixed_session.status();
  EXPECT_TRUE(fixed_session->takes_fixed_width_columns());
  const std::vector<Event> events = Workload();
  absl::StatusOr<v1::IngestSummary> packed =
      IngestBatches(address(), PreviousClientBatches("packed", events, 4));
  ASSERT_TRUE(packed.ok()) << packed.status();
  client::IngestOptions options;
  options.max_batch_events = 4;
  std::unique_ptr<client::IngestWriter> writer =
      client().StartIngest("fixed", options);
  for (const Event& event : events) {
    ASSERT_TRUE(std::visit([&](const auto& e) { return writer->Add(e); },
                           event)
                    .ok());
  }
  absl::StatusOr<v1::IngestSummary> fixed = writer->Finish();
  ASSERT_TRUE(fixed.ok()) << fixed.status();

  // The workload's two bad rows (cpu 9, tgid 0) are rejected in both.
  EXPECT_EQ(fixed->rejected(), 2u);
  EXPECT_TRUE(
      google::protobuf::util::MessageDifferencer::Equals(*packed, *fixed))
      << packed->DebugString() << "\nvs\n" << fixed->DebugString();
  const v1::Report by_packed = ReportWithoutTimes("packed");
  const v1::Report by_fixed = ReportWithoutTimes("fixed");
  EXPECT_GT(by_fixed.policies(0).scans(), 0u);
  EXPECT_TRUE(
      google::protobuf::util::MessageDifferencer::Equals(by_packed, by_fixed))
      << by_packed.DebugString() << "\nvs\n" << by_fixed.DebugString();
}

// KernelDecisionAt is a decision of thread 11 of `tgid`, run on CPU 0.
KernelDecision KernelDecisionAt(int64_t ts, int32_t tgid, int preferred_cpu) {
  KernelDecision d;
  d.timestamp_ns = ts;
  d.cpu = 0;
  d.tgid = tgid;
  d.tid = 11;
  d.preferred_cpu = preferred_cpu;
  d.scanned = true;
  d.next_scan = 42;
  return d;
}

TEST_F(IngestFormsTest, KernelDecisionsReachTheEngineInBothForms) {
  // Process 10 comes to prefer LLC 0 under full-scan (CPU 0 holds its
  // runtime). The kernel then scans and prefers CPU 0, in LLC 0: full-scan
  // agrees, none (no preference) does not. A decision naming CPU 99 is
  // rejected by name; one of process 99, never sampled, is unmatched.
  std::vector<Event> events;
  for (const Sample& s : PreferLlc0Events(10, 1000)) events.push_back(s);
  events.push_back(KernelDecisionAt(30 * kMs, 10, 0));
  events.push_back(KernelDecisionAt(31 * kMs, 10, 99));
  events.push_back(KernelDecisionAt(32 * kMs, 99, 1));
  const std::optional<BothForms> summaries =
      IngestInBothForms(events, v1::EVENT_KIND_KERNEL_DECISION);
  ASSERT_TRUE(summaries.has_value());
  for (const v1::IngestSummary* summary :
       {&summaries->columns, &summaries->events}) {
    EXPECT_EQ(summary->accepted(), 4u);
    ASSERT_EQ(summary->first_rejections_size(), 1);
    EXPECT_EQ(summary->first_rejections(0).index(), 3u);
    EXPECT_THAT(summary->first_rejections(0).reason(),
                HasSubstr("preferred_cpu 99 must be -1 or a CPU"));
  }
  for (const char* session : {"columns", "events"}) {
    SCOPED_TRACE(session);
    absl::StatusOr<v1::Report> report = client().GetReport(session);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_EQ(report->kernel_decisions_applied(), 2u);
    EXPECT_EQ(report->kernel_decisions_unmatched(), 1u);
    const v1::PolicyReport& full_scan = report->policies(0);
    EXPECT_EQ(full_scan.kernel_decisions(), 1u);
    EXPECT_EQ(full_scan.kernel_scans(), 1u);
    EXPECT_EQ(full_scan.kernel_agreements(), 1u);
    EXPECT_EQ(full_scan.kernel_agreement(), 1.0);
    EXPECT_EQ(full_scan.kernel_process_scans(), full_scan.scans());
    EXPECT_EQ(report->policies(2).kernel_agreements(), 0u);  // none
  }
}

TEST_F(IngestFormsTest, ProcessExitsEndTheirProcessesInBothForms) {
  // Process 10 comes to prefer LLC 0 and exits; 99 was never seen. Both
  // exits are accepted and counted; 10 is no longer tracked.
  std::vector<Event> events;
  for (const Sample& s : PreferLlc0Events(10, 1000)) events.push_back(s);
  events.push_back(ProcessExit{.timestamp_ns = 30 * kMs, .tgid = 10});
  events.push_back(ProcessExit{.timestamp_ns = 31 * kMs, .tgid = 99});
  const std::optional<BothForms> summaries =
      IngestInBothForms(events, v1::EVENT_KIND_PROCESS_EXIT);
  ASSERT_TRUE(summaries.has_value());
  for (const char* session : {"columns", "events"}) {
    SCOPED_TRACE(session);
    absl::StatusOr<v1::Report> report = client().GetReport(session);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_EQ(report->process_exits_applied(), 2u);
    EXPECT_EQ(report->samples_applied(), 2u);
    EXPECT_EQ(report->processes_tracked(), 0u);
    EXPECT_EQ(report->events_rejected(), 0u);
    v1::RecommendRequest request;
    request.set_session(session);
    request.set_tgid(10);
    EXPECT_EQ(client().Recommend(request).status().code(),
              absl::StatusCode::kNotFound);
  }
}

TEST_F(IngestFormsTest, ProcessStartsRestartTheirProcessesInBothForms) {
  // Process 10 comes to prefer LLC 0, then execs: the session replaces it
  // with a new group; 30 forks. Both starts are accepted and counted, and
  // both processes are tracked.
  std::vector<Event> events;
  for (const Sample& s : PreferLlc0Events(10, 1000)) events.push_back(s);
  events.push_back(ProcessStart{.timestamp_ns = 30 * kMs, .tgid = 10});
  events.push_back(ProcessStart{.timestamp_ns = 31 * kMs, .tgid = 30});
  const std::optional<BothForms> summaries =
      IngestInBothForms(events, v1::EVENT_KIND_PROCESS_START);
  ASSERT_TRUE(summaries.has_value());
  for (const char* session : {"columns", "events"}) {
    SCOPED_TRACE(session);
    absl::StatusOr<v1::Report> report = client().GetReport(session);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_EQ(report->process_starts_applied(), 2u);
    EXPECT_EQ(report->samples_applied(), 2u);
    EXPECT_EQ(report->processes_tracked(), 2u);
    EXPECT_EQ(report->events_rejected(), 0u);
  }
}

TEST_F(IngestFormsTest, SparseAttributesApplyToTheirRowsOnly) {
  CreateSession("s");
  // Row 0 says the process has 1 thread (no preference: single thread);
  // row 2, after a hand-over row, says 2, so the scan of row 3's tick
  // (20 ms later, as in PreferLlc0Events) picks LLC 0. Were row 2's
  // attribute lost, or taken by the hand-over row, the process would stay
  // single-threaded without a preference.
  std::vector<Event> events;
  Sample first = SampleAt(1000, 0, 10, 11, kMs, true, /*nr_threads=*/1);
  events.push_back(first);
  events.push_back(HandOver{.timestamp_ns = 2000, .cpu = 1, .tgid = 10,
                            .tid = 12});
  Sample two = SampleAt(3000, 1, 10, 12, kMs, true, /*nr_threads=*/2);
  two.comm.Assign("two-threads");
  events.push_back(two);
  events.push_back(SampleAt(1000 + 20 * kMs, 0, 10, 11, kMs, true));
  v1::IngestBatch batch = Columns(events);
  batch.set_session("s");
  ASSERT_EQ(batch.columns().attributes().row_size(), 2);
  EXPECT_EQ(batch.columns().attributes().row(1), 2u);
  absl::StatusOr<v1::IngestSummary> summary =
      IngestBatches(address(), {batch});
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->accepted(), 4u);

  v1::RecommendRequest request;
  request.set_session("s");
  request.set_tgid(10);
  absl::StatusOr<v1::RecommendResponse> answer = client().Recommend(request);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->decisions(0).preferred_llc(), 0)
      << answer->DebugString();
}

TEST_F(IngestFormsTest, BothFormsInOneBatchEndTheStream) {
  v1::IngestBatch first = Columns({SampleAt(1, 0, 1, 1, 1, true)});
  v1::IngestBatch both = Columns({SampleAt(2, 0, 1, 1, 1, true)});
  *both.add_events() = EventMessage(SampleAt(3, 0, 1, 1, 1, true));
  absl::StatusOr<v1::IngestSummary> summary =
      IngestBatches(address(), {first, both});
  EXPECT_EQ(summary.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(summary.status().message(),
              HasSubstr("batch 2 sets both events (1) and columns"));
  EXPECT_THAT(summary.status().message(), HasSubstr("1 events accepted"));
}

TEST_F(IngestFormsTest, UnequalColumnsEndTheStream) {
  v1::IngestBatch batch =
      Columns({SampleAt(1, 0, 1, 1, 1, true), SampleAt(2, 0, 1, 1, 1, true)});
  batch.mutable_columns()->mutable_tid()->RemoveLast();
  absl::StatusOr<v1::IngestSummary> summary = IngestBatches(address(), {batch});
  EXPECT_EQ(summary.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(summary.status().message(),
              HasSubstr("columns.tid has 1 rows but "
                        "columns.timestamp_delta_ns has 2"));
}

TEST_F(IngestFormsTest, BadAttributesEndTheStream) {
  v1::IngestBatch batch = Columns({SampleAt(1, 0, 1, 1, 1, true, 2)});
  batch.mutable_columns()->mutable_attributes()->set_row(0, 1);
  absl::StatusOr<v1::IngestSummary> summary = IngestBatches(address(), {batch});
  EXPECT_EQ(summary.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(summary.status().message(),
              HasSubstr("columns.attributes.row[0] 1 is past the last row"));
}

// A newer client's fields (unknown here) are ignored, batch after batch.
// (That the kept batch message does not accumulate them is not visible
// through the API; IngestStream::Parse clears them before each merge.)
TEST_F(IngestFormsTest, UnknownFieldsAreIgnored) {
  std::vector<v1::IngestBatch> batches;
  for (int64_t t = 1000; t <= 3000; t += 1000) {
    v1::IngestBatch batch = Columns({SampleAt(t, 0, 10, 11, 5, true)});
    batch.GetReflection()->MutableUnknownFields(&batch)->AddVarint(99, 7);
    v1::EventColumns& columns = *batch.mutable_columns();
    columns.GetReflection()->MutableUnknownFields(&columns)->AddLengthDelimited(
        98, "from a newer client");
    batches.push_back(std::move(batch));
  }
  absl::StatusOr<v1::IngestSummary> summary =
      IngestBatches(address(), batches);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->accepted(), 3u);
  EXPECT_EQ(summary->rejected(), 0u);
}

// Bytes that do not parse: field 2 (events) holding a truncated varint.
TEST_F(IngestFormsTest, BytesThatAreNotABatchEndTheStream) {
  v1::IngestBatch good = Columns({SampleAt(1000, 0, 10, 11, 5, true)});
  v1::IngestBatch bad;
  bad.GetReflection()->MutableUnknownFields(&bad)->AddLengthDelimited(
      2, std::string("\xff", 1));
  absl::StatusOr<v1::IngestSummary> summary =
      IngestBatches(address(), {good, bad});
  EXPECT_EQ(summary.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(summary.status().message(),
              HasSubstr("batch 2 is not a valid schedcache.v1.IngestBatch"));
  EXPECT_THAT(summary.status().message(), HasSubstr("1 events accepted"));
}

// The server reads and parses the next batch while one applies: batches
// must still apply in stream order. Times rise batch after batch on one
// CPU, so a batch applied early would be rejected ("before the CPU's
// previous one").
TEST_F(IngestFormsTest, ManyBatchesApplyInStreamOrder) {
  std::vector<v1::IngestBatch> batches;
  constexpr int kBatches = 300;
  for (int b = 0; b < kBatches; ++b) {
    const int64_t t = 1000 + 10 * b;
    batches.push_back(Columns({SampleAt(t, 0, 10, 11, 5, true),
                               SampleAt(t + 5, 0, 10, 12, 5, true, 2)}));
  }
  absl::StatusOr<v1::IngestSummary> summary =
      IngestBatches(address(), batches);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->accepted(), 2u * kBatches);
  EXPECT_EQ(summary->rejected(), 0u)
      << summary->first_rejections(0).reason();
  EXPECT_EQ(summary->batches(), static_cast<uint64_t>(kBatches));
}

TEST_F(IngestFormsTest, BadRowsAreRejectedOneByOneAcrossBatches) {
  v1::IngestBatch first = Columns(
      {SampleAt(1000, 0, 10, 11, 5, true), SampleAt(1000, 9, 10, 11, 5, true)});
  v1::IngestBatch second = Columns({SampleAt(2000, 0, 10, 11, 5, true),
                                    SampleAt(3000, 0, 10, 11, 5, true),
                                    SampleAt(500, 1, 10, 11, -1, true)});
  second.mutable_columns()->set_kind(1, static_cast<v1::EventKind>(8));
  absl::StatusOr<v1::IngestSummary> summary =
      IngestBatches(address(), {first, second});
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->accepted(), 2u);
  EXPECT_EQ(summary->rejected(), 3u);
  EXPECT_EQ(summary->batches(), 2u);
  ASSERT_EQ(summary->first_rejections_size(), 3);
  EXPECT_EQ(summary->first_rejections(0).index(), 1u);
  EXPECT_THAT(summary->first_rejections(0).reason(), HasSubstr("cpu 9"));
  EXPECT_EQ(summary->first_rejections(1).index(), 3u);
  EXPECT_THAT(summary->first_rejections(1).reason(),
              HasSubstr("kind 8 is not an EventKind"));
  EXPECT_EQ(summary->first_rejections(2).index(), 4u);
  EXPECT_THAT(summary->first_rejections(2).reason(), HasSubstr("delta_ns"));
}

// Unreadable rows never reach the engine, yet each rejection keeps its
// row's index: rows 0 (cpu 9), 1 and 2 (kinds 9, 7), 4 (negative delta)
// and 5 (kind 8) are rejected, rows 3 and 6 accepted.
TEST_F(IngestFormsTest, UnreadableAndRefusedRowsInterleaveInRowOrder) {
  v1::IngestBatch batch = Columns(
      {SampleAt(1000, 9, 10, 11, 5, true), SampleAt(1000, 0, 10, 11, 5, true),
       SampleAt(1000, 0, 10, 11, 5, true), SampleAt(1000, 0, 10, 11, 5, true),
       SampleAt(2000, 0, 10, 11, -1, true), SampleAt(2000, 0, 10, 11, 5, true),
       SampleAt(3000, 0, 10, 11, 5, true)});
  v1::EventColumns& columns = *batch.mutable_columns();
  columns.set_kind(1, static_cast<v1::EventKind>(9));
  columns.set_kind(2, static_cast<v1::EventKind>(7));
  columns.set_kind(5, static_cast<v1::EventKind>(8));
  absl::StatusOr<v1::IngestSummary> summary = IngestBatches(address(), {batch});
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->accepted(), 2u);
  EXPECT_EQ(summary->rejected(), 5u);
  ASSERT_EQ(summary->first_rejections_size(), 5);
  const struct {
    uint64_t index;
    const char* reason;
  } expected[] = {{0, "cpu 9"},
                  {1, "kind 9 is not an EventKind"},
                  {2, "kind 7 is not an EventKind"},
                  {4, "delta_ns -1"},
                  {5, "kind 8 is not an EventKind"}};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(summary->first_rejections(i).index(), expected[i].index) << i;
    EXPECT_THAT(summary->first_rejections(i).reason(),
                HasSubstr(expected[i].reason))
        << i;
  }
}

// WireSample is one sample row at the wire's level, every attribute
// optional, so that a test can send values the client library never would.
struct WireSample {
  int64_t timestamp_ns = kMs;
  int32_t cpu = 0;
  int32_t tgid = 10;
  int32_t tid = 11;
  int64_t delta_ns = 1000;
  std::optional<int32_t> nr_threads = std::nullopt;
  std::optional<int32_t> numa_node = std::nullopt;
  std::optional<int64_t> footprint_pages = std::nullopt;
  std::optional<int64_t> jiffies = std::nullopt;
};

// AsEvents is `rows` as Event messages (ticks), set field by field.
v1::IngestBatch AsEvents(const std::vector<WireSample>& rows) {
  v1::IngestBatch batch;
  for (const WireSample& row : rows) {
    v1::Event& event = *batch.add_events();
    event.set_timestamp_ns(row.timestamp_ns);
    event.set_cpu(row.cpu);
    event.set_tgid(row.tgid);
    event.set_tid(row.tid);
    event.set_delta_ns(row.delta_ns);
    event.set_tick(true);
    if (row.nr_threads) event.set_nr_threads(*row.nr_threads);
    if (row.numa_node) event.set_numa_node(*row.numa_node);
    if (row.footprint_pages) event.set_footprint_pages(*row.footprint_pages);
    if (row.jiffies) event.set_jiffies(*row.jiffies);
  }
  return batch;
}

// AsColumns is `rows` as EventColumns (ticks), the attributes as sparse
// entries, column by column.
v1::IngestBatch AsColumns(const std::vector<WireSample>& rows) {
  v1::IngestBatch batch;
  v1::EventColumns& c = *batch.mutable_columns();
  int64_t previous = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const WireSample& row = rows[i];
    c.add_timestamp_delta_ns(row.timestamp_ns - previous);
    previous = row.timestamp_ns;
    c.add_cpu(row.cpu);
    c.add_tgid(row.tgid);
    c.add_tid(row.tid);
    c.add_delta_ns(row.delta_ns);
    c.add_kind(v1::EVENT_KIND_TICK);
    uint32_t fields = 0;
    v1::SparseAttributes& a = *c.mutable_attributes();
    if (row.nr_threads) {
      fields |= v1::ATTRIBUTE_BIT_NR_THREADS;
      a.add_nr_threads(*row.nr_threads);
    }
    if (row.numa_node) {
      fields |= v1::ATTRIBUTE_BIT_NUMA_NODE;
      a.add_numa_node(*row.numa_node);
    }
    if (row.footprint_pages) {
      fields |= v1::ATTRIBUTE_BIT_FOOTPRINT_PAGES;
      a.add_footprint_pages(*row.footprint_pages);
    }
    if (row.jiffies) {
      fields |= v1::ATTRIBUTE_BIT_JIFFIES;
      a.add_jiffies(*row.jiffies);
    }
    if (fields != 0) {
      a.add_row(static_cast<uint32_t>(i));
      a.add_fields(fields);
    }
  }
  return batch;
}

// Every bound the proto documents for a sample holds in both forms, with a
// reason naming the field and the value. nr_threads -1, numa_node -2,
// footprint_pages -1 and jiffies -1 are the values Sample uses for "not
// sent" (events/event.h): sent, they break the proto's bounds and must not
// read as "unchanged" (api/proto_convert.h, CheckSampleAttributes).
TEST_F(IngestFormsTest, EveryBadSampleValueIsRejectedInBothForms) {
  struct Case {
    WireSample row;
    const char* reason;
  };
  const Case cases[] = {
      {{.timestamp_ns = -1}, "timestamp_ns -1 "},
      {{.cpu = 99}, "cpu 99 "},
      {{.tgid = 0}, "tgid 0 "},
      {{.tid = -3}, "tid -3 "},
      {{.delta_ns = -1}, "delta_ns -1 "},
      {{.nr_threads = 0}, "nr_threads 0 "},
      {{.nr_threads = -1}, "nr_threads -1 "},
      {{.numa_node = -2}, "numa_node -2 "},
      {{.numa_node = 5}, "numa_node 5 "},
      {{.footprint_pages = -1}, "footprint_pages -1 "},
      {{.footprint_pages = -2}, "footprint_pages -2 "},
      {{.jiffies = -1}, "jiffies -1 "},
      {{.jiffies = (int64_t{1} << 62) + 1}, "jiffies 4611686018427387905 "},
  };
  std::vector<WireSample> rows;
  for (const Case& c : cases) rows.push_back(c.row);
  rows.push_back(WireSample{});  // a good row: the stream goes on
  ASSERT_LE(rows.size(), 16u);   // every rejection is in first_rejections
  for (const bool columns : {false, true}) {
    SCOPED_TRACE(columns ? "columns" : "events");
    const std::string session = columns ? "columns" : "events";
    CreateSession(session);
    v1::IngestBatch batch = columns ? AsColumns(rows) : AsEvents(rows);
    batch.set_session(session);
    absl::StatusOr<v1::IngestSummary> summary =
        IngestBatches(address(), {batch});
    ASSERT_TRUE(summary.ok()) << summary.status();
    EXPECT_EQ(summary->accepted(), 1u);
    ASSERT_EQ(summary->first_rejections_size(), std::size(cases));
    for (size_t i = 0; i < std::size(cases); ++i) {
      EXPECT_EQ(summary->first_rejections(i).index(), i);
      EXPECT_THAT(summary->first_rejections(i).reason(),
                  HasSubstr(cases[i].reason));
    }
  }
}

TEST(IngestFormsLimits, MaxBatchEventsCountsRows) {
  ServerOptions options;
  options.limits.max_batch_events = 2;
  absl::StatusOr<std::unique_ptr<TestServer>> test =
      TestServer::Start(Transport::kUnix, options);
  ASSERT_TRUE(test.ok()) << test.status();
  v1::IngestBatch batch =
      Columns({SampleAt(1, 0, 1, 1, 1, true), HandOver{.timestamp_ns = 2},
               SampleAt(3, 0, 1, 1, 1, true)});
  absl::StatusOr<v1::IngestSummary> summary =
      IngestBatches((*test)->server->addresses().front(), {batch});
  EXPECT_EQ(summary.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(summary.status().message(), HasSubstr("has 3 events"));
  EXPECT_THAT(summary.status().message(), HasSubstr("--max_batch_events"));
}

}  // namespace
}  // namespace schedcache::test_support
