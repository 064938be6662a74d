/* share THREADS SECONDS: one process of THREADS threads (the main thread is
 * one of them) that share a 256 KiB buffer: each thread adds to every cache
 * line of it for 4 ms, then sleeps 1 ms, until SECONDS have passed. The
 * sleeps make each thread wake about 200 times a second, so a scheduler
 * places it at wake-up, not only when its slice ends; busy 4/5 of the time,
 * a process of THREADS threads keeps about 0.8 * THREADS CPUs busy. The
 * closed loop's workload (docs/KERNEL.md, "The closed loop"). */
#include <time.h>

#include "workload.h"

static const char kUsage[] = "THREADS SECONDS";

enum {
  kBufferBytes = 256 * 1024,
  kLineBytes = 64,
  kWorkNs = 4 * 1000 * 1000,
  kSleepNs = 1 * 1000 * 1000,
};

static long long deadline_ns;
/* The data every thread of the process writes: volatile, so no pass is
 * optimised away. */
static volatile unsigned char shared[kBufferBytes];

static void *Share(void *unused) {
  (void)unused;
  const struct timespec pause = {.tv_sec = 0, .tv_nsec = kSleepNs};
  long long now = now_ns();
  while (now < deadline_ns) {
    const long long until = now + kWorkNs;
    while (now < until) {
      for (int i = 0; i < kBufferBytes; i += kLineBytes) {
        shared[i] = (unsigned char)(shared[i] + 1);
      }
      now = now_ns();
    }
    nanosleep(&pause, NULL);
    now = now_ns();
  }
  return NULL;
}

int main(int argc, char **argv) {
  run_threads_for(kUsage, argc, argv, Share, &deadline_ns);
  return 0;
}
