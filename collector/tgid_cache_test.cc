#include "collector/tgid_cache.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache::host {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// A fake procfs in a temporary directory: TID/status files written by hand.
class FakeProc {
 public:
  FakeProc()
      : root_(std::filesystem::path(::testing::TempDir()) /
              absl::StrCat("fake_proc_", getpid(), "_",
                           ::testing::UnitTest::GetInstance()
                               ->current_test_info()
                               ->name())) {
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  ~FakeProc() { std::filesystem::remove_all(root_); }

  void WriteStatus(int tid, const std::string& text) {
    std::filesystem::create_directories(root_ / std::to_string(tid));
    std::ofstream(root_ / std::to_string(tid) / "status") << text;
  }
  void Remove(int tid) {
    std::filesystem::remove_all(root_ / std::to_string(tid));
  }
  std::string root() const { return root_.string(); }

 private:
  std::filesystem::path root_;
};

// The head of a real /proc/TID/status for thread 4243 of process 4242.
constexpr char kThreadStatus[] =
    "Name:\tworker\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\n"
    "Ngid:\t0\nPid:\t4243\nPPid:\t1\n";

TEST(TgidCache, ReadsTgidOnceThenAnswersFromMemory) {
  FakeProc proc;
  proc.WriteStatus(4243, kThreadStatus);
  TgidCache cache(proc.root());
  ASSERT_EQ(cache.Tgid(4243).value_or(-1), 4242);
  // The file is gone but the answer is cached: a tgid never changes.
  proc.Remove(4243);
  EXPECT_EQ(cache.Tgid(4243).value_or(-1), 4242);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(TgidCache, ForgetMakesARecycledTidReadAfresh) {
  FakeProc proc;
  proc.WriteStatus(4243, kThreadStatus);
  TgidCache cache(proc.root());
  ASSERT_EQ(cache.Tgid(4243).value_or(-1), 4242);
  cache.Forget(4243);
  proc.WriteStatus(4243, "Name:\tnew\nTgid:\t4243\n");
  EXPECT_EQ(cache.Tgid(4243).value_or(-1), 4243);
}

TEST(TgidCache, AGoneThreadIsNotFoundAndNotCached) {
  FakeProc proc;
  TgidCache cache(proc.root());
  const absl::StatusOr<int> tgid = cache.Tgid(77);
  EXPECT_EQ(tgid.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(tgid.status().message(), HasSubstr("thread 77 is gone"));
  EXPECT_EQ(cache.size(), 0u);
  // It appears later (a new thread with that tid): now it is read.
  proc.WriteStatus(77, "Tgid:\t70\n");
  EXPECT_EQ(cache.Tgid(77).value_or(-1), 70);
}

TEST(TgidCache, TheIdleTaskIsItsOwnGroupWithoutProc) {
  FakeProc proc;
  TgidCache cache(proc.root());
  EXPECT_EQ(cache.Tgid(0).value_or(-1), 0);
}

TEST(TgidCache, ReadsTheRealProcOfThisProcess) {
  TgidCache cache;
  EXPECT_EQ(cache.Tgid(static_cast<int>(gettid())).value_or(-1),
            static_cast<int>(getpid()));
}

TEST(ParseTgidFromStatus, RejectsAMissingOrBadTgidNamingFileAndValue) {
  EXPECT_THAT(ParseTgidFromStatus("Name:\tx\nPid:\t3\n", "/p/3/status")
                  .status()
                  .message(),
              AllOf(HasSubstr("/p/3/status"), HasSubstr("no \"Tgid:\" line")));
  const absl::StatusOr<int> bad =
      ParseTgidFromStatus("Tgid:\tabc\n", "/p/4/status");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(),
              AllOf(HasSubstr("/p/4/status"), HasSubstr("\"abc\"")));
  EXPECT_FALSE(ParseTgidFromStatus("Tgid:\t0\n", "s").ok());
}

}  // namespace
}  // namespace schedcache::host
