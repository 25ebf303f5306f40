/*
 * log.h — devmalloc's messages (process.c): one line each, to DEVMALLOC_LOG or
 * stderr, filtered by DEVMALLOC_VERBOSE.
 *
 * Locking: every function may be called from any thread.
 */
#ifndef DM_LOG_H
#define DM_LOG_H
#include <stddef.h>
#include <time.h>
#include "options.h"

enum { DM_LOG_WARN = 0, DM_LOG_INFO = 1, DM_LOG_DEBUG = 2 };
void dm_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Write buf as it is (no prefix, no level). */
void dm_log_write(const char *buf, size_t len);
int dm_log_fd(void);
/* Point the log where o->log says (stderr when unset or refused), at o->verbose;
 * dm_options() does it once, tests again. */
void dm_log_open(const dm_options_t *o);
/* Milliseconds on the monotonic clock, for the durations messages give. */
static inline double dm_clock_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

#endif
