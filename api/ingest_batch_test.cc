// Reading an IngestBatch: the form checks of CheckBatchForm (each names the
// field and values) and ForEachBatchEvent over hand-built columns: delta
// coded times, kinds, and sparse attributes landing on their rows.
#include <cstdint>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "api/proto_convert.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace schedcache {
namespace {

using ::testing::HasSubstr;

using Read =
    std::variant<Sample, HandOver, ProcessExit, ProcessStart, KernelDecision,
                 absl::Status>;

std::vector<Read> ReadAll(const v1::IngestBatch& batch) {
  std::vector<Read> out;
  ForEachBatchEvent(batch, [&out](const auto& event) {
    if constexpr (std::is_same_v<std::decay_t<decltype(event)>,
                                 UnreadableRow>) {
      out.push_back(event.reason);
    } else {
      out.push_back(event);
    }
  });
  return out;
}

// AddRow appends one row to `batch`'s columns.
void AddRow(v1::IngestBatch& batch, int64_t time_delta, int cpu, int tgid,
            int tid, int64_t delta_ns, int kind) {
  v1::EventColumns& c = *batch.mutable_columns();
  c.add_timestamp_delta_ns(time_delta);
  c.add_cpu(cpu);
  c.add_tgid(tgid);
  c.add_tid(tid);
  c.add_delta_ns(delta_ns);
  c.add_kind(static_cast<v1::EventKind>(kind));
}

// ThreeRows: a tick sample, a hand-over, a switch-out sample.
v1::IngestBatch ThreeRows() {
  v1::IngestBatch batch;
  AddRow(batch, 1000, 0, 10, 11, 50, v1::EVENT_KIND_TICK);
  AddRow(batch, 20, 1, 20, 21, 0, v1::EVENT_KIND_HANDOVER);
  AddRow(batch, -5, 2, 10, 12, 70, v1::EVENT_KIND_SWITCH_OUT);
  return batch;
}

TEST(ForEachBatchEvent, ColumnsDecodeToSamplesAndHandOvers) {
  const v1::IngestBatch batch = ThreeRows();
  ASSERT_TRUE(CheckBatchForm(batch).ok());
  const std::vector<Read> rows = ReadAll(batch);
  ASSERT_EQ(rows.size(), 3u);
  const Sample& tick = std::get<Sample>(rows[0]);
  EXPECT_EQ(tick.timestamp_ns, 1000);
  EXPECT_EQ(tick.cpu, 0);
  EXPECT_EQ(tick.tgid, 10);
  EXPECT_EQ(tick.tid, 11);
  EXPECT_EQ(tick.delta_ns, 50);
  EXPECT_TRUE(tick.tick);
  EXPECT_EQ(tick.nr_threads, kUnchangedNrThreads);
  const HandOver& in = std::get<HandOver>(rows[1]);
  EXPECT_EQ(in.timestamp_ns, 1020);
  EXPECT_EQ(in.cpu, 1);
  EXPECT_EQ(in.tgid, 20);
  EXPECT_EQ(in.tid, 21);
  const Sample& out = std::get<Sample>(rows[2]);
  EXPECT_EQ(out.timestamp_ns, 1015);  // deltas may be negative
  EXPECT_FALSE(out.tick);
  EXPECT_EQ(out.delta_ns, 70);
}

TEST(ForEachBatchEvent, UnknownKindIsAnUnreadableRowAndTheRestIsRead) {
  v1::IngestBatch batch = ThreeRows();
  batch.mutable_columns()->set_kind(1, static_cast<v1::EventKind>(7));
  ASSERT_TRUE(CheckBatchForm(batch).ok());
  const std::vector<Read> rows = ReadAll(batch);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_TRUE(std::holds_alternative<Sample>(rows[0]));
  EXPECT_THAT(std::get<absl::Status>(rows[1]).message(),
              HasSubstr("kind 7 is not an EventKind"));
  EXPECT_EQ(std::get<Sample>(rows[2]).timestamp_ns, 1015);
}

TEST(ForEachBatchEvent, SparseAttributesLandOnTheirRows) {
  v1::IngestBatch batch = ThreeRows();
  AddRow(batch, 5, 3, 30, 31, 10, v1::EVENT_KIND_TICK);
  v1::SparseAttributes& a = *batch.mutable_columns()->mutable_attributes();
  // Row 1 is a hand-over: its values are skipped, not given to row 2.
  a.add_row(1);
  a.add_fields(v1::ATTRIBUTE_BIT_NR_THREADS | v1::ATTRIBUTE_BIT_COMM);
  a.add_nr_threads(99);
  a.add_comm("ignored");
  a.add_row(2);
  a.add_fields(v1::ATTRIBUTE_BIT_NR_THREADS | v1::ATTRIBUTE_BIT_NUMA_NODE);
  a.add_nr_threads(4);
  a.add_numa_node(-1);
  a.add_row(3);
  a.add_fields(v1::ATTRIBUTE_BIT_FOOTPRINT_PAGES | v1::ATTRIBUTE_BIT_COMM);
  a.add_footprint_pages(0);
  a.add_comm("a-very-long-process-name");
  ASSERT_TRUE(CheckBatchForm(batch).ok()) << CheckBatchForm(batch);
  const std::vector<Read> rows = ReadAll(batch);
  ASSERT_EQ(rows.size(), 4u);
  const Sample& row0 = std::get<Sample>(rows[0]);
  EXPECT_EQ(row0.nr_threads, kUnchangedNrThreads);
  EXPECT_EQ(row0.numa_node, kUnchangedNumaNode);
  EXPECT_EQ(row0.footprint_pages, kUnchangedFootprint);
  EXPECT_TRUE(row0.comm.empty());
  const Sample& row2 = std::get<Sample>(rows[2]);
  EXPECT_EQ(row2.nr_threads, 4);
  EXPECT_EQ(row2.numa_node, -1);
  EXPECT_EQ(row2.footprint_pages, kUnchangedFootprint);
  EXPECT_TRUE(row2.comm.empty());
  const Sample& row3 = std::get<Sample>(rows[3]);
  EXPECT_EQ(row3.nr_threads, kUnchangedNrThreads);
  EXPECT_EQ(row3.footprint_pages, 0);
  EXPECT_EQ(row3.comm.view(), "a-very-long-pro");  // TASK_COMM_LEN
}

TEST(ForEachBatchEvent, EventsFormStillReads) {
  v1::IngestBatch batch;
  v1::Event* sample = batch.add_events();
  sample->set_timestamp_ns(7);
  sample->set_tgid(1);
  sample->set_tid(2);
  sample->set_nr_threads(3);
  v1::Event* handover = batch.add_events();
  handover->set_handover(true);
  handover->set_timestamp_ns(8);
  ASSERT_TRUE(CheckBatchForm(batch).ok());
  const std::vector<Read> rows = ReadAll(batch);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(std::get<Sample>(rows[0]).nr_threads, 3);
  EXPECT_EQ(std::get<HandOver>(rows[1]).timestamp_ns, 8);
  EXPECT_EQ(BatchEventCount(batch), 2);
}

TEST(ForEachBatchEvent, ColumnsCarryProcessExitsWithTimeAndTgidOnly) {
  // Row 1 is an exit at 1000 + 10: its cpu, tid and delta_ns are ignored,
  // and its attribute entry is skipped, not given to row 2.
  v1::IngestBatch batch;
  AddRow(batch, 1000, 0, 10, 11, 50, v1::EVENT_KIND_TICK);
  AddRow(batch, 10, 5, 42, 7, 99, v1::EVENT_KIND_PROCESS_EXIT);
  AddRow(batch, 10, 1, 10, 11, 60, v1::EVENT_KIND_SWITCH_OUT);
  v1::SparseAttributes& a = *batch.mutable_columns()->mutable_attributes();
  a.add_row(1);
  a.add_fields(v1::ATTRIBUTE_BIT_NR_THREADS);
  a.add_nr_threads(99);
  ASSERT_TRUE(CheckBatchForm(batch).ok()) << CheckBatchForm(batch);
  const std::vector<Read> rows = ReadAll(batch);
  ASSERT_EQ(rows.size(), 3u);
  const ProcessExit& exit = std::get<ProcessExit>(rows[1]);
  EXPECT_EQ(exit.timestamp_ns, 1010);
  EXPECT_EQ(exit.tgid, 42);
  const Sample& after = std::get<Sample>(rows[2]);
  EXPECT_EQ(after.timestamp_ns, 1020);
  EXPECT_EQ(after.nr_threads, kUnchangedNrThreads);
}

TEST(ForEachBatchEvent, EventsCarryProcessExitsButNotAsHandOversToo) {
  v1::IngestBatch batch;
  v1::Event* exit = batch.add_events();
  exit->set_process_exit(true);
  exit->set_timestamp_ns(9);
  exit->set_tgid(42);
  exit->set_cpu(3);  // ignored
  v1::Event* both = batch.add_events();
  both->set_process_exit(true);
  both->set_handover(true);
  const std::vector<Read> rows = ReadAll(batch);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(std::get<ProcessExit>(rows[0]).timestamp_ns, 9);
  EXPECT_EQ(std::get<ProcessExit>(rows[0]).tgid, 42);
  EXPECT_EQ(std::get<absl::Status>(rows[1]).message(),
            "handover and process_exit are both true: an event is one kind");
}

TEST(ForEachBatchEvent, ColumnsAndEventsCarryProcessStartsWithTimeAndTgidOnly) {
  // Row 1 is a start at 1000 + 10; its cpu, tid and delta_ns are ignored.
  v1::IngestBatch columns;
  AddRow(columns, 1000, 0, 10, 11, 50, v1::EVENT_KIND_TICK);
  AddRow(columns, 10, 5, 42, 7, 99, v1::EVENT_KIND_PROCESS_START);
  ASSERT_TRUE(CheckBatchForm(columns).ok()) << CheckBatchForm(columns);
  const std::vector<Read> rows = ReadAll(columns);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(std::get<ProcessStart>(rows[1]).timestamp_ns, 1010);
  EXPECT_EQ(std::get<ProcessStart>(rows[1]).tgid, 42);

  v1::IngestBatch events;
  v1::Event* start = events.add_events();
  start->set_timestamp_ns(9);
  start->set_tgid(42);
  start->set_process_start(true);
  for (const auto& [handover, exit, decision] :
       {std::tuple{true, false, false}, std::tuple{false, true, false},
        std::tuple{false, false, true}}) {
    v1::Event* both = events.add_events();
    both->set_process_start(true);
    both->set_handover(handover);
    both->set_process_exit(exit);
    if (decision) both->mutable_kernel_decision();
  }
  const std::vector<Read> read = ReadAll(events);
  ASSERT_EQ(read.size(), 4u);
  EXPECT_EQ(std::get<ProcessStart>(read[0]).timestamp_ns, 9);
  EXPECT_EQ(std::get<ProcessStart>(read[0]).tgid, 42);
  for (size_t i = 1; i < read.size(); ++i) {
    ASSERT_TRUE(std::holds_alternative<absl::Status>(read[i])) << i;
    EXPECT_THAT(std::get<absl::Status>(read[i]).message(),
                HasSubstr("an event is one kind"))
        << i;
  }
}

// AddKernelEntry appends one entry to `batch`'s kernel_decisions columns;
// the other fields are distinct values derived from `preferred_cpu`.
void AddKernelEntry(v1::IngestBatch& batch, int preferred_cpu, bool scanned) {
  v1::KernelDecisionColumns& k =
      *batch.mutable_columns()->mutable_kernel_decisions();
  k.add_preferred_cpu(preferred_cpu);
  k.add_scanned(scanned);
  k.add_nr_running_avg(preferred_cpu + 100);
  k.add_footprint(preferred_cpu + 200);
  k.add_group(0xabcdef0123456789u);
  k.add_jiffies(preferred_cpu + 300);
  k.add_group_epoch(preferred_cpu + 400);
  k.add_next_scan(preferred_cpu + 500);
  k.add_cpu_epoch(preferred_cpu + 600);
  k.add_cpu_epoch_next(preferred_cpu + 700);
}

TEST(ForEachBatchEvent, ColumnsCarryKernelDecisionsInRowOrder) {
  // Rows: decision at 1000 (entry 0, pref -1), tick at 1010, decision at
  // 1020 (entry 1, pref 3 scanned); row fields give time, cpu, tgid, tid.
  v1::IngestBatch batch;
  AddRow(batch, 1000, 2, 10, 11, 0, v1::EVENT_KIND_KERNEL_DECISION);
  AddRow(batch, 10, 0, 10, 11, 50, v1::EVENT_KIND_TICK);
  AddRow(batch, 10, 1, 10, 12, 0, v1::EVENT_KIND_KERNEL_DECISION);
  AddKernelEntry(batch, -1, false);
  AddKernelEntry(batch, 3, true);
  ASSERT_TRUE(CheckBatchForm(batch).ok()) << CheckBatchForm(batch);
  const std::vector<Read> rows = ReadAll(batch);
  ASSERT_EQ(rows.size(), 3u);
  const KernelDecision& first = std::get<KernelDecision>(rows[0]);
  EXPECT_EQ(first.timestamp_ns, 1000);
  EXPECT_EQ(first.cpu, 2);
  EXPECT_EQ(first.preferred_cpu, -1);
  EXPECT_FALSE(first.scanned);
  EXPECT_EQ(std::get<Sample>(rows[1]).timestamp_ns, 1010);
  const KernelDecision& second = std::get<KernelDecision>(rows[2]);
  EXPECT_EQ(second.timestamp_ns, 1020);
  EXPECT_EQ(second.cpu, 1);
  EXPECT_EQ(second.tgid, 10);
  EXPECT_EQ(second.tid, 12);
  EXPECT_EQ(second.preferred_cpu, 3);
  EXPECT_TRUE(second.scanned);
  EXPECT_EQ(second.nr_running_avg, 103);
  EXPECT_EQ(second.footprint, 203);
  EXPECT_EQ(second.group, 0xabcdef0123456789u);
  EXPECT_EQ(second.jiffies, 303);
  EXPECT_EQ(second.group_epoch, 403);
  EXPECT_EQ(second.next_scan, 503);
  EXPECT_EQ(second.cpu_epoch, 603);
  EXPECT_EQ(second.cpu_epoch_next, 703);
}

TEST(CheckBatchForm, NamesAKernelColumnWithoutOneEntryPerDecisionRow) {
  v1::IngestBatch batch;
  AddRow(batch, 1000, 2, 10, 11, 0, v1::EVENT_KIND_KERNEL_DECISION);
  AddRow(batch, 10, 2, 10, 11, 0, v1::EVENT_KIND_KERNEL_DECISION);
  AddKernelEntry(batch, 1, true);
  const absl::Status short_columns = CheckBatchForm(batch);
  EXPECT_EQ(short_columns.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(short_columns.message(),
            "columns.kernel_decisions.preferred_cpu has 1 entries but the "
            "columns have 2 kernel decision rows");
  AddKernelEntry(batch, 2, true);
  batch.mutable_columns()->mutable_kernel_decisions()->add_jiffies(9);
  EXPECT_THAT(CheckBatchForm(batch).message(),
              HasSubstr("columns.kernel_decisions.jiffies has 3 entries"));
}

// EventFromText is the Event message `text` (text format), as a python or
// grpcurl client writes one field by field.
v1::Event EventFromText(const std::string& text) {
  v1::Event event;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &event))
      << text;
  return event;
}

TEST(ForEachBatchEvent, EventsCarryKernelDecisionsButNotAsExitsToo) {
  const std::string decision =
      "timestamp_ns: 77 cpu: 1 tgid: 10 tid: 11 kernel_decision { "
      "preferred_cpu: 5 scanned: true nr_running_avg: 2 footprint: 3 "
      "group: 4 jiffies: 5 group_epoch: 6 next_scan: 7 cpu_epoch: 8 "
      "cpu_epoch_next: 9 }";
  v1::IngestBatch batch;
  *batch.add_events() = EventFromText(decision);
  *batch.add_events() = EventFromText(decision + " process_exit: true");
  const std::vector<Read> rows = ReadAll(batch);
  ASSERT_EQ(rows.size(), 2u);
  const KernelDecision& back = std::get<KernelDecision>(rows[0]);
  EXPECT_EQ(std::make_tuple(back.timestamp_ns, back.cpu, back.tgid, back.tid,
                            back.preferred_cpu, back.scanned,
                            back.nr_running_avg, back.footprint, back.group,
                            back.jiffies, back.group_epoch, back.next_scan,
                            back.cpu_epoch, back.cpu_epoch_next),
            std::make_tuple(int64_t{77}, 1, 10, 11, 5, true, 2, 3, 4, 5, 6, 7,
                            8, 9));
  EXPECT_THAT(std::get<absl::Status>(rows[1]).message(),
              HasSubstr("kernel_decision is set and handover or process_exit"));
}

TEST(ProcessExitFromEvent, ReadsEveryField) {
  const v1::Event event =
      EventFromText("timestamp_ns: 9 tgid: 42 process_exit: true");
  const ProcessExit back = ProcessExitFromEvent(event);
  EXPECT_EQ(std::make_pair(back.timestamp_ns, back.tgid),
            std::make_pair(int64_t{9}, 42));
}

// SampleFields is every field of a sample, comparable in one EXPECT_EQ.
auto SampleFields(const Sample& s) {
  return std::make_tuple(s.timestamp_ns, s.cpu, s.tgid, s.tid, s.delta_ns,
                         s.tick, s.nr_threads, s.numa_node, s.footprint_pages,
                         std::string(s.comm.view()), s.cache_group);
}

// Every field differs from its default, so one the reader drops shows.
TEST(SampleFromEvent, ReadsEveryField) {
  const Sample expected{.timestamp_ns = 7, .cpu = 3, .tgid = 10, .tid = 11,
                        .delta_ns = 500, .tick = true, .nr_threads = 4,
                        .numa_node = -1, .footprint_pages = 99,
                        .comm = Comm("worker"),
                        .cache_group = UINT64_MAX};
  // Any cache_group is valid, the largest too: a group is an identity.
  EXPECT_EQ(SampleFields(SampleFromEvent(EventFromText(
                "timestamp_ns: 7 cpu: 3 tgid: 10 tid: 11 delta_ns: 500 "
                "tick: true nr_threads: 4 numa_node: -1 footprint_pages: 99 "
                "comm: 'worker' cache_group: 18446744073709551615"))),
            SampleFields(expected));
  // Attributes not sent read as unchanged (Sample's defaults).
  EXPECT_EQ(SampleFields(SampleFromEvent(v1::Event())),
            SampleFields(Sample{}));
}

TEST(HandOverFromEvent, ReadsEveryField) {
  const HandOver back = HandOverFromEvent(
      EventFromText("timestamp_ns: 8 cpu: 2 tgid: 20 tid: 21 handover: true"));
  EXPECT_EQ(std::make_tuple(back.timestamp_ns, back.cpu, back.tgid, back.tid),
            std::make_tuple(8, 2, 20, 21));
}

TEST(ForEachBatchEvent, TimeSumsWrapInsteadOfOverflowing) {
  v1::IngestBatch batch;
  AddRow(batch, INT64_MAX, 0, 1, 1, 0, v1::EVENT_KIND_TICK);
  AddRow(batch, 2, 0, 1, 1, 0, v1::EVENT_KIND_TICK);
  const std::vector<Read> rows = ReadAll(batch);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(std::get<Sample>(rows[1]).timestamp_ns, INT64_MIN + 1);
}

TEST(CheckBatchForm, BothFormsNamesBoth) {
  v1::IngestBatch batch = ThreeRows();
  batch.add_events();
  const absl::Status status = CheckBatchForm(batch);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("both events (1) and columns"));
}

TEST(CheckBatchForm, EmptyColumnsBesideEventsAreNoSecondForm) {
  v1::IngestBatch batch;
  batch.add_events();
  batch.mutable_columns();
  EXPECT_TRUE(CheckBatchForm(batch).ok());
}

// AppendLittleEndian appends the `width` low bytes of `value`, least
// significant first: the fixed-width columns' encoding, written out here
// byte by byte rather than borrowed from the client.
void AppendLittleEndian(std::string& column, int64_t value, int width) {
  const auto bits = static_cast<uint64_t>(value);
  for (int i = 0; i < width; ++i) {
    column.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
  }
}

// ToFixedWidth moves `batch`'s timestamp_delta_ns, delta_ns and kind into
// their fixed-width twins.
v1::IngestBatch ToFixedWidth(v1::IngestBatch batch) {
  v1::EventColumns& c = *batch.mutable_columns();
  for (int row = 0; row < c.timestamp_delta_ns_size(); ++row) {
    AppendLittleEndian(*c.mutable_timestamp_delta_ns_le(),
                       c.timestamp_delta_ns(row), 8);
    AppendLittleEndian(*c.mutable_delta_ns_le(), c.delta_ns(row), 8);
    AppendLittleEndian(*c.mutable_kind_le(), c.kind().Get(row), 4);
  }
  c.clear_timestamp_delta_ns();
  c.clear_delta_ns();
  c.clear_kind();
  return batch;
}

TEST(ForEachBatchEvent, FixedWidthColumnsReadAsThePackedForm) {
  v1::IngestBatch packed = ThreeRows();
  // A negative time delta (row 2: -5) and an unknown kind (7) too, so the
  // sign and the raw kind survive the little-endian form.
  AddRow(packed, 30, 3, 30, 31, 0, 7);
  const v1::IngestBatch fixed = ToFixedWidth(packed);
  ASSERT_TRUE(CheckBatchForm(fixed).ok()) << CheckBatchForm(fixed);
  EXPECT_EQ(BatchEventCount(fixed), 4);
  // 4 rows of 8 bytes (times) and of 4 (kinds): the form is what is sent.
  EXPECT_EQ(fixed.columns().timestamp_delta_ns_le().size(), 32u);
  EXPECT_EQ(fixed.columns().kind_le().size(), 16u);
  const std::vector<Read> want = ReadAll(packed);
  const std::vector<Read> got = ReadAll(fixed);
  ASSERT_EQ(got.size(), 4u);
  ASSERT_EQ(want.size(), 4u);
  // Times 1000, 1020, 1015: the sum of the deltas, -5 included.
  EXPECT_EQ(std::get<Sample>(got[0]).timestamp_ns, 1000);
  EXPECT_EQ(std::get<Sample>(got[0]).delta_ns, 50);
  EXPECT_EQ(std::get<HandOver>(got[1]).timestamp_ns, 1020);
  EXPECT_EQ(std::get<Sample>(got[2]).timestamp_ns, 1015);
  EXPECT_EQ(std::get<Sample>(got[2]).delta_ns, 70);
  EXPECT_FALSE(std::get<Sample>(got[2]).tick);
  EXPECT_THAT(std::get<absl::Status>(got[3]).message(),
              HasSubstr("kind 7 is not an EventKind"));
  EXPECT_EQ(std::get<absl::Status>(want[3]), std::get<absl::Status>(got[3]));
}

TEST(CheckBatchForm, FixedWidthColumnOfPartValuesIsNamedWithItsLength) {
  const struct {
    const char* field;
    std::string* (v1::EventColumns::*column)();
    const char* message;
  } cases[] = {
      {"timestamp_delta_ns_le", &v1::EventColumns::mutable_timestamp_delta_ns_le,
       "columns.timestamp_delta_ns_le has 25 bytes, not a multiple of its "
       "width 8"},
      {"delta_ns_le", &v1::EventColumns::mutable_delta_ns_le,
       "columns.delta_ns_le has 25 bytes, not a multiple of its width 8"},
      {"kind_le", &v1::EventColumns::mutable_kind_le,
       "columns.kind_le has 13 bytes, not a multiple of its width 4"},
  };
  for (const auto& test : cases) {
    v1::IngestBatch batch = ToFixedWidth(ThreeRows());
    ((*batch.mutable_columns()).*test.column)()->push_back('\0');
    const absl::Status status = CheckBatchForm(batch);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << test.field;
    EXPECT_THAT(status.message(), HasSubstr(test.message)) << test.field;
  }
}

TEST(CheckBatchForm, FixedWidthColumnsOfOtherLengthsAreNamed) {
  v1::IngestBatch short_kind = ToFixedWidth(ThreeRows());
  short_kind.mutable_columns()->mutable_kind_le()->resize(8);  // 2 rows
  EXPECT_THAT(CheckBatchForm(short_kind).message(),
              HasSubstr("columns.kind_le has 2 rows but "
                        "columns.timestamp_delta_ns_le has 3"));
  v1::IngestBatch short_cpu = ToFixedWidth(ThreeRows());
  short_cpu.mutable_columns()->mutable_cpu()->RemoveLast();
  EXPECT_THAT(CheckBatchForm(short_cpu).message(),
              HasSubstr("columns.cpu has 2 rows but "
                        "columns.timestamp_delta_ns_le has 3"));
  // A packed twin beside a fixed-width column: two forms in one batch.
  v1::IngestBatch mixed = ToFixedWidth(ThreeRows());
  mixed.mutable_columns()->clear_kind_le();
  for (int i = 0; i < 3; ++i) {
    mixed.mutable_columns()->add_kind(v1::EVENT_KIND_TICK);
  }
  const absl::Status status = CheckBatchForm(mixed);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("columns.kind has 3 rows but the batch sends the "
                        "fixed-width form (columns.kind_le)"));
}

TEST(CheckBatchForm, EachShortColumnIsNamedWithBothLengths) {
  const struct {
    const char* name;
    void (*shorten)(v1::EventColumns&);
  } cases[] = {
      {"cpu", [](v1::EventColumns& c) { c.mutable_cpu()->RemoveLast(); }},
      {"tgid", [](v1::EventColumns& c) { c.mutable_tgid()->RemoveLast(); }},
      {"tid", [](v1::EventColumns& c) { c.mutable_tid()->RemoveLast(); }},
      {"delta_ns",
       [](v1::EventColumns& c) { c.mutable_delta_ns()->RemoveLast(); }},
      {"kind", [](v1::EventColumns& c) { c.mutable_kind()->RemoveLast(); }},
  };
  for (const auto& test : cases) {
    v1::IngestBatch batch = ThreeRows();
    test.shorten(*batch.mutable_columns());
    const absl::Status status = CheckBatchForm(batch);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(),
                HasSubstr(std::string("columns.") + test.name +
                          " has 2 rows but columns.timestamp_delta_ns has 3"));
  }
}

// WithGroups is ThreeRows (tick, hand-over, switch-out) with a
// cache_group column of `groups`.
v1::IngestBatch WithGroups(const std::vector<uint64_t>& groups) {
  v1::IngestBatch batch = ThreeRows();
  for (const uint64_t group : groups) {
    batch.mutable_columns()->add_cache_group(group);
  }
  return batch;
}

TEST(ForEachBatchEvent, CacheGroupColumnLandsOnSampleRowsInEitherForm) {
  // Row 1 is a hand-over, whose group is read and ignored; row 2 names
  // group 0 (its own) explicitly; row 0 the largest value.
  const v1::IngestBatch packed = WithGroups({UINT64_MAX, 5, 0});
  for (const v1::IngestBatch& batch : {packed, ToFixedWidth(packed)}) {
    ASSERT_TRUE(CheckBatchForm(batch).ok()) << CheckBatchForm(batch);
    const std::vector<Read> rows = ReadAll(batch);
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(std::get<Sample>(rows[0]).cache_group, UINT64_MAX);
    EXPECT_TRUE(std::holds_alternative<HandOver>(rows[1]));
    EXPECT_EQ(std::get<Sample>(rows[2]).cache_group, kOwnCacheGroup);
  }
  // No column: every sample in its own group.
  for (const v1::IngestBatch& batch : {ThreeRows(), ToFixedWidth(ThreeRows())}) {
    const std::vector<Read> rows = ReadAll(batch);
    EXPECT_EQ(std::get<Sample>(rows[0]).cache_group, kOwnCacheGroup);
    EXPECT_EQ(std::get<Sample>(rows[2]).cache_group, kOwnCacheGroup);
  }
}

TEST(ForEachBatchEvent, EventsCarryTheirCacheGroup) {
  v1::IngestBatch batch;
  v1::Event& grouped = *batch.add_events();
  grouped.set_tgid(10);
  grouped.set_tid(10);
  grouped.set_cache_group(42);
  batch.add_events()->set_tgid(20);  // no group: its own
  const std::vector<Read> rows = ReadAll(batch);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(std::get<Sample>(rows[0]).cache_group, 42u);
  EXPECT_EQ(std::get<Sample>(rows[1]).cache_group, kOwnCacheGroup);
}

TEST(CheckBatchForm, ACacheGroupColumnOfAnotherLengthIsNamedWithIt) {
  // Too short, too long, and a column beside no rows at all; in the fixed-
  // width form the rows are counted in timestamp_delta_ns_le.
  EXPECT_EQ(CheckBatchForm(WithGroups({1, 2})).message(),
            "columns.cache_group has 2 rows but columns.timestamp_delta_ns "
            "has 3 (an empty column: every row 0)");
  EXPECT_EQ(CheckBatchForm(ToFixedWidth(WithGroups({1, 2, 3, 4}))).message(),
            "columns.cache_group has 4 rows but "
            "columns.timestamp_delta_ns_le has 3 (an empty column: every row "
            "0)");
  v1::IngestBatch no_rows;
  no_rows.mutable_columns()->add_cache_group(7);
  const absl::Status status = CheckBatchForm(no_rows);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("columns.cache_group has 1 rows but "
                        "columns.timestamp_delta_ns has 0"));
}

// WithAttributes is ThreeRows with one attribute entry per (row, fields).
v1::IngestBatch WithAttributes(
    const std::vector<std::pair<uint32_t, uint32_t>>& entries) {
  v1::IngestBatch batch = ThreeRows();
  v1::SparseAttributes& a = *batch.mutable_columns()->mutable_attributes();
  for (const auto& [row, fields] : entries) {
    a.add_row(row);
    a.add_fields(fields);
    if (fields & 1) a.add_nr_threads(2);
    if (fields & 2) a.add_numa_node(0);
    if (fields & 4) a.add_footprint_pages(1);
    if (fields & 8) a.add_comm("x");
    if (fields & 16) a.add_jiffies(5);
  }
  return batch;
}

TEST(CheckBatchForm, AttributeErrorsNameTheFieldAndValue) {
  EXPECT_TRUE(CheckBatchForm(WithAttributes({{0, 1}, {2, 31}})).ok());

  EXPECT_THAT(CheckBatchForm(WithAttributes({{3, 1}})).message(),
              HasSubstr("columns.attributes.row[0] 3 is past the last row"));
  EXPECT_THAT(CheckBatchForm(WithAttributes({{2, 1}, {2, 1}})).message(),
              HasSubstr("columns.attributes.row[1] 2 does not follow 2"));
  EXPECT_THAT(CheckBatchForm(WithAttributes({{0, 0}})).message(),
              HasSubstr("columns.attributes.fields[0] 0 is not a sum"));
  EXPECT_THAT(CheckBatchForm(WithAttributes({{0, 32}})).message(),
              HasSubstr("columns.attributes.fields[0] 32 is not a sum"));

  v1::IngestBatch missing_fields = WithAttributes({{0, 1}});
  missing_fields.mutable_columns()->mutable_attributes()->add_row(1);
  EXPECT_THAT(CheckBatchForm(missing_fields).message(),
              HasSubstr("columns.attributes.fields has 1 entries but "
                        "columns.attributes.row has 2"));

  const struct {
    const char* name;
    void (*extra)(v1::SparseAttributes&);
  } values[] = {
      {"nr_threads", [](v1::SparseAttributes& a) { a.add_nr_threads(1); }},
      {"numa_node", [](v1::SparseAttributes& a) { a.add_numa_node(1); }},
      {"footprint_pages",
       [](v1::SparseAttributes& a) { a.add_footprint_pages(1); }},
      {"comm", [](v1::SparseAttributes& a) { a.add_comm()->assign(1, 'y'); }},
      {"jiffies", [](v1::SparseAttributes& a) { a.add_jiffies(6); }},
  };
  for (const auto& test : values) {
    v1::IngestBatch batch = WithAttributes({{0, 31}});
    test.extra(*batch.mutable_columns()->mutable_attributes());
    const absl::Status status = CheckBatchForm(batch);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(),
                HasSubstr(std::string("columns.attributes.") + test.name +
                          " has 2 values but 1 entries set its bit"));
  }
}

// ColumnField is one repeated field of EventColumns or of one of its
// message fields (attributes, kernel_decisions), found through the
// descriptor, so a column added to the proto is covered here without
// editing the test.
struct ColumnField {
  const google::protobuf::FieldDescriptor* field;
  // The EventColumns message field that holds it; null: a row column.
  const google::protobuf::FieldDescriptor* owner = nullptr;
};

std::vector<ColumnField> EveryColumnField() {
  std::vector<ColumnField> out;
  const google::protobuf::Descriptor& columns =
      *v1::EventColumns::descriptor();
  for (int i = 0; i < columns.field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = columns.field(i);
    // Repeated fields, and the fixed-width forms (bytes), are row columns.
    if (field->is_repeated() ||
        field->type() == google::protobuf::FieldDescriptor::TYPE_BYTES) {
      out.push_back({field, nullptr});
      continue;
    }
    // The message fields, attributes and kernel_decisions: every field of
    // them is a column.
    const google::protobuf::Descriptor& inner = *field->message_type();
    for (int j = 0; j < inner.field_count(); ++j) {
      EXPECT_TRUE(inner.field(j)->is_repeated()) << inner.field(j)->name();
      out.push_back({inner.field(j), field});
    }
  }
  return out;
}

// AddOneValue appends a value to `column` of `columns`, whatever its type
// (0 for an enum; the tests here check only the batch's shape).
void AddOneValue(v1::EventColumns& columns, const ColumnField& column) {
  google::protobuf::Message& owner =
      column.owner != nullptr
          ? *columns.GetReflection()->MutableMessage(&columns, column.owner)
          : static_cast<google::protobuf::Message&>(columns);
  const google::protobuf::Reflection& reflection = *owner.GetReflection();
  const google::protobuf::FieldDescriptor* field = column.field;
  using Field = google::protobuf::FieldDescriptor;
  switch (field->cpp_type()) {
    case Field::CPPTYPE_INT32:
      return reflection.AddInt32(&owner, field, 1);
    case Field::CPPTYPE_INT64:
      return reflection.AddInt64(&owner, field, 1);
    case Field::CPPTYPE_UINT32:
      return reflection.AddUInt32(&owner, field, 0);
    case Field::CPPTYPE_UINT64:
      return reflection.AddUInt64(&owner, field, 1);
    case Field::CPPTYPE_BOOL:
      return reflection.AddBool(&owner, field, true);
    case Field::CPPTYPE_ENUM:
      return reflection.AddEnumValue(&owner, field, 0);
    case Field::CPPTYPE_STRING:
      if (!field->is_repeated()) {
        return reflection.SetString(&owner, field, "x");
      }
      return reflection.AddString(&owner, field, "x");
    default:
      ADD_FAILURE() << "column " << field->full_name() << " has a type "
                    << field->cpp_type_name() << " this test cannot fill";
  }
}

int FieldSize(const v1::EventColumns& columns, const ColumnField& column) {
  const google::protobuf::Message& owner =
      column.owner != nullptr
          ? columns.GetReflection()->GetMessage(columns, column.owner)
          : static_cast<const google::protobuf::Message&>(columns);
  const google::protobuf::Reflection& reflection = *owner.GetReflection();
  if (!column.field->is_repeated()) {  // a fixed-width column: its bytes
    return static_cast<int>(reflection.GetString(owner, column.field).size());
  }
  return reflection.FieldSize(owner, column.field);
}

TEST(ClearColumns, EveryColumnOfTheProtoIsCountedAndCleared) {
  const std::vector<ColumnField> fields = EveryColumnField();
  // 7 row columns (cache_group among them) and 3 fixed-width twins, 7
  // attribute columns (row, fields and five values) and 10 kernel decision
  // columns today.
  EXPECT_EQ(fields.size(), 27u);
  for (const ColumnField& column : fields) {
    v1::EventColumns columns;
    AddOneValue(columns, column);
    EXPECT_FALSE(ColumnsEmpty(columns)) << column.field->full_name();
    ClearColumns(columns);
    EXPECT_EQ(FieldSize(columns, column), 0) << column.field->full_name();
    EXPECT_TRUE(ColumnsEmpty(columns)) << column.field->full_name();
  }
}

TEST(CheckBatchForm, EveryRowColumnOfTheProtoHasItsLengthChecked) {
  std::vector<ColumnField> row_columns;
  for (const ColumnField& column : EveryColumnField()) {
    // The packed form; the fixed-width twins have tests of their own.
    if (column.owner == nullptr && column.field->is_repeated()) {
      row_columns.push_back(column);
    }
  }
  v1::IngestBatch full;
  for (const ColumnField& column : row_columns) {
    AddOneValue(*full.mutable_columns(), column);
  }
  EXPECT_TRUE(CheckBatchForm(full).ok()) << CheckBatchForm(full);
  for (const ColumnField& missing : row_columns) {
    if (missing.field->name() == "timestamp_delta_ns") continue;
    // An empty cache_group means every row 0; its length has its own test.
    if (missing.field->name() == "cache_group") continue;
    v1::IngestBatch batch;
    for (const ColumnField& column : row_columns) {
      if (column.field != missing.field) {
        AddOneValue(*batch.mutable_columns(), column);
      }
    }
    EXPECT_THAT(CheckBatchForm(batch).message(),
                HasSubstr("columns." + missing.field->name() +
                          " has 0 rows but columns.timestamp_delta_ns has 1"));
  }
}

}  // namespace
}  // namespace schedcache
