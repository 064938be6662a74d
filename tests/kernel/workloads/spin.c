/* spin THREADS SECONDS: THREADS CPU-bound threads (the main thread is one
 * of them) that spin until SECONDS have passed; the busy process of the
 * guest scenarios (docs/KERNEL.md). */
#include <pthread.h>
#include <stdlib.h>

#include "workload.h"

static const char kUsage[] = "THREADS SECONDS";

static long long deadline_ns;

static void *Spin(void *unused) {
  (void)unused;
  /* The volatile counter keeps the loop from being optimised away. */
  volatile unsigned long spins = 0;
  while (now_ns() < deadline_ns) {
    for (int i = 0; i < 10000; ++i) spins = spins + 1;
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3) workload_usage(kUsage, "wrong number of arguments", NULL);
  const int threads = parse_count(kUsage, "THREADS", argv[1], 1, 1024);
  deadline_ns = now_ns() + parse_seconds(kUsage, "SECONDS", argv[2]);
  pthread_t ids[1024];
  start_threads(ids, threads - 1, Spin, NULL, 0);
  Spin(NULL);
  join_threads(ids, threads - 1);
  return 0;
}
