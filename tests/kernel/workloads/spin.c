/* spin THREADS SECONDS: THREADS CPU-bound threads (the main thread is one
 * of them) that spin until SECONDS have passed; the busy process of the
 * guest scenarios (docs/KERNEL.md). */

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
  run_threads_for(kUsage, argc, argv, Spin, &deadline_ns);
  return 0;
}
