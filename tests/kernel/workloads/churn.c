/* churn SECONDS PROGRAM [ARG...]: until SECONDS have passed, forks a child
 * that execs PROGRAM with ARGs and waits for it, one child at a time
 * (fork/exec/exit churn; docs/KERNEL.md). Prints "churn: child PID" for
 * each child and "churn: N children" at the end. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload.h"

static const char kUsage[] = "SECONDS PROGRAM [ARG...]";

int main(int argc, char **argv) {
  if (argc < 3) workload_usage(kUsage, "wrong number of arguments", NULL);
  const long long deadline_ns =
      now_ns() + parse_seconds(kUsage, "SECONDS", argv[1]);
  long children = 0;
  while (now_ns() < deadline_ns) {
    const pid_t pid = fork();
    if (pid < 0) workload_die("fork");
    if (pid == 0) {
      execv(argv[2], &argv[2]);
      workload_die(argv[2]);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) workload_die("waitpid");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "churn: child %d (%s) failed, status %#x\n", (int)pid,
              argv[2], (unsigned)status);
      return 1;
    }
    printf("churn: child %d\n", (int)pid);
    ++children;
  }
  printf("churn: %ld children\n", children);
  return 0;
}
