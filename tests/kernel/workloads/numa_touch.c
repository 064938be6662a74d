/* numa_touch THREADS MIB SECONDS: the main thread allocates MIB MiB and
 * writes all of it (first touch puts the pages on its node); then THREADS
 * threads each write their slice, one byte per cache line, over and over
 * until SECONDS have passed. With NUMA balancing on, the kernel samples
 * these accesses, migrates pages or tasks, and gives the process a
 * preferred node and a footprint (docs/KERNEL.md). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

static const char kUsage[] = "THREADS MIB SECONDS";

enum { kMaxThreads = 256, kCacheLine = 64 };

struct Slice {
  char *begin;
  size_t size;
};

static long long deadline_ns;

static void *Touch(void *arg) {
  const struct Slice *slice = arg;
  while (now_ns() < deadline_ns) {
    for (size_t i = 0; i < slice->size; i += kCacheLine) ++slice->begin[i];
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 4) workload_usage(kUsage, "wrong number of arguments", NULL);
  const int threads = parse_count(kUsage, "THREADS", argv[1], 1, kMaxThreads);
  const int mib = parse_count(kUsage, "MIB", argv[2], 1, 65536);
  deadline_ns = now_ns() + parse_seconds(kUsage, "SECONDS", argv[3]);
  const size_t size = (size_t)mib << 20;
  char *buffer = malloc(size);
  if (buffer == NULL) workload_die("malloc");
  memset(buffer, 1, size);
  struct Slice slices[kMaxThreads];
  const size_t slice_size = size / threads;
  for (int i = 0; i < threads; ++i) {
    slices[i] = (struct Slice){.begin = buffer + i * slice_size,
                               .size = slice_size};
  }
  pthread_t ids[kMaxThreads];
  start_threads(ids, threads, Touch, slices, sizeof(slices[0]));
  join_threads(ids, threads);
  free(buffer);
  return 0;
}
