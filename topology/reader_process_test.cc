#include "topology/reader_process.h"

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace schedcache::reader_process {
namespace {

using ::testing::HasSubstr;

constexpr absl::string_view kTestService = "reader-process-test";

// OpenFds counts this process's open file descriptors.
int OpenFds() {
  int count = 0;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count - 1;  // the directory stream's own descriptor
}

// The test binary's own reader: a request is a command.
std::string Serve(absl::string_view request) {
  if (request == "crash") raise(SIGSEGV);
  if (request == "exit 3") _exit(3);
  if (request == "hang") pause();
  if (request == "fds") return absl::StrCat(OpenFds());
  return std::string(request.rbegin(), request.rend());
}

__attribute__((constructor)) void ServeTestRequests() {
  ServeIfReaderProcess(kTestService, Serve);
}

// NoChildLeft is true when every reader process has been waited for.
bool NoChildLeft() {
  return waitpid(-1, nullptr, WNOHANG) < 0 && errno == ECHILD;
}

TEST(ReaderProcess, AnswersTheRequest) {
  absl::StatusOr<std::string> answer =
      Call(kTestService, "abc", absl::Seconds(30));
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(*answer, "cba");
  EXPECT_TRUE(NoChildLeft());
}

TEST(ReaderProcess, MovesRequestsAndAnswersLargerThanAPipe) {
  // 8 MiB each way: the reader reads all before it answers, so the caller
  // must send everything before it reads.
  std::string request(8 << 20, 'x');
  request.front() = 'a';
  absl::StatusOr<std::string> answer =
      Call(kTestService, request, absl::Seconds(30));
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->size(), request.size());
  EXPECT_EQ(answer->back(), 'a');
}

TEST(ReaderProcess, ACrashIsAbortedNamingTheSignal) {
  absl::StatusOr<std::string> answer =
      Call(kTestService, "crash", absl::Seconds(30));
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kAborted);
  // Under ASan the reader reports the SEGV and exits with status 1.
  EXPECT_THAT(answer.status().message(),
              testing::AnyOf(HasSubstr("killed by signal 11"),
                             HasSubstr("exited with status 1")));
  EXPECT_TRUE(NoChildLeft());
}

TEST(ReaderProcess, ANonZeroExitIsAbortedNamingTheStatus) {
  absl::StatusOr<std::string> answer =
      Call(kTestService, "exit 3", absl::Seconds(30));
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(answer.status().message(), HasSubstr("exited with status 3"));
}

TEST(ReaderProcess, AReaderThatHangsIsKilledAtTheTimeout) {
  const absl::Time start = absl::Now();
  absl::StatusOr<std::string> answer =
      Call(kTestService, "hang", absl::Milliseconds(300));
  EXPECT_EQ(answer.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(answer.status().message(),
              HasSubstr("did not answer within 300ms and was killed"));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(300));
  EXPECT_TRUE(NoChildLeft());
}

TEST(ReaderProcess, TheReaderHoldsOnlyStdinStdoutAndStderr) {
  // A descriptor the caller holds without O_CLOEXEC is not inherited.
  const int held = dup(STDOUT_FILENO);
  ASSERT_GE(held, 0);
  absl::StatusOr<std::string> answer =
      Call(kTestService, "fds", absl::Seconds(30));
  close(held);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(*answer, "3");
}

}  // namespace
}  // namespace schedcache::reader_process
