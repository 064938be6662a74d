/* program_invocation_short_name (errno.h) is a GNU extension. */
#define _GNU_SOURCE
#include "workload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void workload_usage(const char *usage, const char *message, const char *arg) {
  if (arg != NULL) {
    fprintf(stderr, "%s: %s \"%s\"\n", program_invocation_short_name, message,
            arg);
  } else {
    fprintf(stderr, "%s: %s\n", program_invocation_short_name, message);
  }
  fprintf(stderr, "usage: %s %s\n", program_invocation_short_name, usage);
  exit(2);
}

void workload_die(const char *what) {
  fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, what,
          strerror(errno));
  exit(1);
}

int parse_count(const char *usage, const char *name, const char *arg, int min,
                int max) {
  char *end = NULL;
  errno = 0;
  const long value = strtol(arg, &end, 10);
  if (errno != 0 || end == arg || *end != '\0' || value < min || value > max) {
    char message[96];
    snprintf(message, sizeof(message), "%s must be an integer in %d..%d, not",
             name, min, max);
    workload_usage(usage, message, arg);
  }
  return (int)value;
}

long long parse_seconds(const char *usage, const char *name, const char *arg) {
  char *end = NULL;
  errno = 0;
  const double value = strtod(arg, &end);
  if (errno != 0 || end == arg || *end != '\0' || !(value > 0) ||
      value > 86400) {
    char message[96];
    snprintf(message, sizeof(message), "%s must be seconds in (0, 86400], not",
             name);
    workload_usage(usage, message, arg);
  }
  return (long long)(value * 1e9);
}

long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void start_threads(pthread_t *threads, int count, void *(*body)(void *),
                   void *arg, unsigned long arg_size) {
  for (int i = 0; i < count; ++i) {
    const int error =
        pthread_create(&threads[i], NULL, body, (char *)arg + i * arg_size);
    if (error != 0) {
      errno = error;
      workload_die("pthread_create");
    }
  }
}

void join_threads(pthread_t *threads, int count) {
  for (int i = 0; i < count; ++i) pthread_join(threads[i], NULL);
}

void run_threads_for(const char *usage, int argc, char **argv,
                     void *(*body)(void *), long long *deadline_ns) {
  if (argc != 3) workload_usage(usage, "wrong number of arguments", NULL);
  const int threads = parse_count(usage, "THREADS", argv[1], 1, 1024);
  *deadline_ns = now_ns() + parse_seconds(usage, "SECONDS", argv[2]);
  pthread_t ids[1024];
  start_threads(ids, threads - 1, body, NULL, 0);
  body(NULL);
  join_threads(ids, threads - 1);
}
