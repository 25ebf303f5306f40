/*
 * grow_backoff.h — how long the service thread of a heap that grows
 * (grower.c) sleeps after a pass: the idle backoff as a pure function.
 *
 * After a pass with nothing to do the sleep doubles, up to a cap (the
 * maximum, or poll_ns if that is longer); a pass that mapped (or tried to:
 * a fresh refusal) or found a trim pending sets it back to poll_ns. A
 * target held back by a standing refusal (device full) is not work: the
 * retry after the refusal's pause does not depend on the sleep.
 *
 * Locking: none; no state, no side effects. The caller keeps the current
 * sleep (the service thread's own). poll_ns > 0 (dm_grower_start replaces 0
 * with its default).
 */
#ifndef DM_HOST_GROW_BACKOFF_H
#define DM_HOST_GROW_BACKOFF_H

#include <stdint.h>

/* What a pass of the service thread did (flags, or 0: nothing to do). */
enum {
  DM_PASS_TRIM = 1,      /* a trim was pending (finished, or its claim still running) */
  DM_PASS_MAPPED = 2,    /* it mapped toward the target, or tried and was refused */
  DM_PASS_HELD_BACK = 4, /* the target was held back by a standing refusal (idle) */
};

/* The sleep after a pass that did `did`, given the sleep before it. */
static inline uint64_t dm_grow_next_sleep(uint64_t cur, unsigned did, uint64_t poll_ns, uint64_t max_ns) {
  uint64_t cap = poll_ns > max_ns ? poll_ns : max_ns;
  if (did & (DM_PASS_TRIM | DM_PASS_MAPPED)) return poll_ns;
  return cur > cap / 2 ? cap : cur * 2;
}

#endif
