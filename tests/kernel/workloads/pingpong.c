/* pingpong PAIRS SECONDS: two processes of PAIRS threads each; thread i of
 * the parent and thread i of the child pass one byte back and forth through
 * a pair of pipes until SECONDS have passed (hackbench-like wake-ups between
 * two processes; docs/KERNEL.md). */
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload.h"

static const char kUsage[] = "PAIRS SECONDS";

enum { kMaxPairs = 256 };

/* One thread's ends: it writes `out` and reads `in`. */
struct Ends {
  int in;
  int out;
};

static long long deadline_ns;

/* Ping writes first and stops at the deadline; closing its write end ends
 * the partner's loop with EOF. */
static void *Ping(void *arg) {
  const struct Ends *ends = arg;
  char byte = 'x';
  while (now_ns() < deadline_ns) {
    if (write(ends->out, &byte, 1) != 1) workload_die("write");
    if (read(ends->in, &byte, 1) != 1) workload_die("read");
  }
  close(ends->out);
  return NULL;
}

/* Pong answers every byte until EOF. */
static void *Pong(void *arg) {
  const struct Ends *ends = arg;
  char byte;
  while (read(ends->in, &byte, 1) == 1) {
    if (write(ends->out, &byte, 1) != 1) workload_die("write");
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3) workload_usage(kUsage, "wrong number of arguments", NULL);
  const int pairs = parse_count(kUsage, "PAIRS", argv[1], 1, kMaxPairs);
  deadline_ns = now_ns() + parse_seconds(kUsage, "SECONDS", argv[2]);
  struct Ends parent[kMaxPairs];
  struct Ends child[kMaxPairs];
  for (int i = 0; i < pairs; ++i) {
    int to_child[2];
    int to_parent[2];
    if (pipe(to_child) != 0 || pipe(to_parent) != 0) workload_die("pipe");
    parent[i] = (struct Ends){.in = to_parent[0], .out = to_child[1]};
    child[i] = (struct Ends){.in = to_child[0], .out = to_parent[1]};
  }
  pthread_t threads[kMaxPairs];
  const pid_t pid = fork();
  if (pid < 0) workload_die("fork");
  if (pid == 0) {
    /* The child keeps only its own ends, so EOF comes when the parent's
     * Ping closes its write end. */
    for (int i = 0; i < pairs; ++i) {
      close(parent[i].in);
      close(parent[i].out);
    }
    start_threads(threads, pairs, Pong, child, sizeof(child[0]));
    join_threads(threads, pairs);
    return 0;
  }
  for (int i = 0; i < pairs; ++i) {
    close(child[i].in);
    close(child[i].out);
  }
  start_threads(threads, pairs, Ping, parent, sizeof(parent[0]));
  join_threads(threads, pairs);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) workload_die("waitpid");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
