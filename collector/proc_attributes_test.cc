#include "collector/proc_attributes.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "events/recording_sink.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache::host {
namespace {

using ::testing::HasSubstr;

// A fake procfs: PID/status, PID/comm and PID/task/TID/sched by hand.
class FakeProc {
 public:
  FakeProc()
      : root_(std::filesystem::path(::testing::TempDir()) /
              absl::StrCat("proc_attributes_", getpid(), "_",
                           ::testing::UnitTest::GetInstance()
                               ->current_test_info()
                               ->name())) {
    std::filesystem::remove_all(root_);
  }
  ~FakeProc() { std::filesystem::remove_all(root_); }

  void WriteProcess(int tgid, int threads, const std::string& comm) {
    const std::filesystem::path dir = root_ / std::to_string(tgid);
    std::filesystem::create_directories(dir / "task");
    std::ofstream(dir / "status")
        << "Name:\t" << comm << "\nTgid:\t" << tgid << "\nThreads:\t"
        << threads << "\n";
    std::ofstream(dir / "comm") << comm << "\n";
  }
  void WriteThread(int tgid, int tid, int nid, int faults) {
    const std::filesystem::path dir =
        root_ / std::to_string(tgid) / "task" / std::to_string(tid);
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "sched")
        << "w (" << tid << ", #threads: 2)\n---\n"
        << "numa_preferred_nid                           :   " << nid << "\n"
        << "total_numa_faults                            :   " << faults
        << "\n";
  }
  void Remove(int tgid) {
    std::filesystem::remove_all(root_ / std::to_string(tgid));
  }
  std::string root() const { return root_.string(); }

 private:
  std::filesystem::path root_;
};

TEST(ParseThreadSched, ReadsNodeAndFaultsAndNamesABadValue) {
  absl::StatusOr<ThreadSchedValues> values = ParseThreadSched(
      "se.vruntime : 1.5\nnuma_preferred_nid : 1\ntotal_numa_faults : 42\n",
      "sched");
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_EQ(values->numa_preferred_nid, 1);
  EXPECT_EQ(values->total_numa_faults, 42);
  // NUMA balancing off: no lines, the defaults (no node, no faults).
  values = ParseThreadSched("se.vruntime : 1.5\n", "sched");
  ASSERT_TRUE(values.ok());
  EXPECT_EQ(values->numa_preferred_nid, -1);
  EXPECT_EQ(values->total_numa_faults, 0);
  values = ParseThreadSched("a : 1\ntotal_numa_faults : many\n", "/p/sched");
  ASSERT_FALSE(values.ok());
  EXPECT_THAT(values.status().message(),
              HasSubstr("/p/sched:2: total_numa_faults is not an integer: "
                        "\"many\""));
}

TEST(ParseThreadsLine, NamesTheFileWhenMissingOrBad) {
  EXPECT_EQ(*ParseThreadsLine("Tgid:\t5\nThreads:\t3\n", "s"), 3);
  EXPECT_THAT(ParseThreadsLine("Tgid:\t5\n", "/p/5/status").status().message(),
              HasSubstr("/p/5/status: no \"Threads:\" line"));
  EXPECT_THAT(ParseThreadsLine("Threads:\t-1\n", "s").status().message(),
              HasSubstr("\"-1\""));
}

TEST(ProcAttributes, SumsFaultsOverThreadsAndRereadsOncePerEpoch) {
  FakeProc proc;
  proc.WriteProcess(100, 2, "server");
  proc.WriteThread(100, 100, 0, 30);
  proc.WriteThread(100, 101, 1, 12);
  ProcAttributes attributes(/*epoch_ns=*/10, proc.root());
  const ProcessAttributes* read = attributes.Lookup(100, 1000);
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->nr_threads, 2);
  EXPECT_EQ(read->footprint_pages, 42);  // 30 + 12
  EXPECT_EQ(read->comm, "server");
  EXPECT_EQ(read->preferred_node.at(101), 1);
  // Within the epoch (1009 - 1000 < 10) the cached values answer...
  proc.WriteThread(100, 101, 1, 20);
  EXPECT_EQ(attributes.Lookup(100, 1009)->footprint_pages, 42);
  EXPECT_EQ(attributes.reads(), 1);
  // ...and at the epoch the files are read again: 30 + 20.
  EXPECT_EQ(attributes.Lookup(100, 1010)->footprint_pages, 50);
  EXPECT_EQ(attributes.reads(), 2);
}

TEST(ProcAttributes, AGoneProcessHasNoEntryAndSamplesKeepTheirValues) {
  FakeProc proc;
  proc.WriteProcess(100, 1, "short");
  proc.WriteThread(100, 100, 0, 5);
  ProcAttributes attributes(/*epoch_ns=*/10, proc.root());
  RecordingSink recorded;
  AttributeSink sink(attributes, recorded);
  Sample sample;
  sample.timestamp_ns = 1000;
  sample.tgid = 100;
  sample.tid = 100;
  sample.nr_threads = 7;
  ASSERT_TRUE(sink.OnSample(sample).ok());
  proc.Remove(100);
  sample.timestamp_ns = 2000;
  ASSERT_TRUE(sink.OnSample(sample).ok());
  sample.timestamp_ns = 3000;
  ASSERT_TRUE(sink.OnSample(sample).ok());
  // Read at 1000 and found gone at 2000; at 3000 not read again.
  EXPECT_EQ(attributes.reads(), 2);
  EXPECT_EQ(attributes.unreadable(), 1);
  ASSERT_EQ(recorded.events().size(), 3u);
  const Sample& filled = std::get<Sample>(recorded.events()[0]);
  EXPECT_EQ(filled.nr_threads, 1);
  EXPECT_EQ(filled.footprint_pages, 5);
  EXPECT_EQ(filled.numa_node, 0);
  const Sample& kept = std::get<Sample>(recorded.events()[1]);
  EXPECT_EQ(kept.nr_threads, 7);
  EXPECT_EQ(kept.footprint_pages, kUnchangedFootprint);
}

// The real /proc: this test process, with a second thread parked on a
// notification, has 2 threads and a sched file for each.
TEST(ProcAttributes, ReadsThisProcessFromTheRealProc) {
  absl::Notification done;
  std::thread parked([&done] { done.WaitForNotification(); });
  ProcAttributes attributes(/*epoch_ns=*/1);
  const ProcessAttributes* self = attributes.Lookup(getpid(), 0);
  ASSERT_NE(self, nullptr);
  EXPECT_EQ(self->nr_threads, 2);
  EXPECT_EQ(self->preferred_node.size(), 2u);
  EXPECT_GE(self->footprint_pages, 0);
  done.Notify();
  parked.join();
}

}  // namespace
}  // namespace schedcache::host
