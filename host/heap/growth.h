/*
 * growth.h — the host half of a heap that grows (docs/design.md, "A heap
 * that grows"): a service thread that maps memory at the pool's top when the
 * device asks (dm_grow_host_t.target), ahead of need, and a trim that unmaps
 * free memory at the top again. Driver-agnostic: memory is mapped and
 * unmapped through dm_grow_ops_t (CUDA VMM in growth.c's runtime part; mprotect
 * in tests/unit/test_grow.c).
 *
 * Locking: one mutex per grower, taken by the service thread around a map
 * and by trim/stop; never held while waiting for the device or for any lock
 * of the application. The service thread calls only the ops and
 * clock/nanosleep; it polls every poll_ns while there is work and backs off
 * to DM_GROW_IDLE_POLL_NS when idle.
 */
#ifndef DM_HOST_GROWTH_H
#define DM_HOST_GROWTH_H

#include <stdint.h>
#include "dm_types.h"

typedef struct dm_grow_ops {
  /* Map pool bytes [off, off + bytes): 0 ok, 1 out of memory, -1 other error. */
  int (*map)(void *ctx, uint64_t off, uint64_t bytes);
  /* Unmap what map mapped at [off, off + bytes) (always whole map calls). */
  void (*unmap)(void *ctx, uint64_t off, uint64_t bytes);
  /* Called once on the service thread before it first maps (may be NULL). */
  void (*thread_init)(void *ctx);
} dm_grow_ops_t;

typedef struct dm_grow_cfg {
  uint64_t pool_bytes; /* the reserved pool (a multiple of the step is not required) */
  uint64_t initial;    /* mapped at start (rounded up to the step) */
  uint64_t step;       /* unit of mapping and unmapping (multiple of DM_GROW_BYTES) */
  uint64_t poll_ns;    /* service thread's polling period (while there is work) */
} dm_grow_cfg_t;

/* The idle service thread doubles its sleep after each pass with nothing to
 * do, up to this (or poll_ns if that is longer); work sets it back to
 * poll_ns (grow_backoff.h). */
#define DM_GROW_IDLE_POLL_NS 1000000ull

typedef struct dm_grower dm_grower_t;

/* Map cfg->initial and start the service thread over shared block x (alive
 * set). NULL on failure (nothing left mapped); *err says why (1: out of
 * memory, -1 other). */
dm_grower_t *dm_grower_start(dm_grow_host_t *x, const dm_grow_cfg_t *cfg, const dm_grow_ops_t *ops, void *ctx,
                             int *err);

/* Trim: take free memory at the top back and unmap it, keeping at least
 * `keep` bytes (and the initial size) mapped. `launch(arg, floor, unit)`
 * starts dm_grow_trim where the tree lives (a kernel on the GPU), which takes
 * free units at the top of the released range back down to floor at most,
 * sets the shared block's ceiling at its new top and writes that top to
 * x->trim_result; launch returns 0 once started. The service thread keeps
 * mapping meanwhile and, when the result is there, unmaps everything above
 * it, lowers `mapped` and clears the ceiling. Nothing waits for the device
 * with a lock held.
 * dm_grower_trim_start: 1 started, 0 nothing to do or a trim under way,
 * -1 launch failed. dm_grower_trim: start (after any trim under way) and
 * wait for the end; returns the bytes unmapped (*err = 1: launch failed). */
int dm_grower_trim_start(dm_grower_t *g, uint64_t keep,
                         int (*launch)(void *arg, uint64_t floor, uint64_t unit), void *arg);
uint64_t dm_grower_trim(dm_grower_t *g, uint64_t keep,
                        int (*launch)(void *arg, uint64_t floor, uint64_t unit), void *arg, int *err);

/* Stop the service thread (alive cleared: waiting requests end in NULL) and
 * unmap everything it mapped; frees g. */
void dm_grower_stop(dm_grower_t *g);

typedef struct dm_grower_stats {
  uint64_t mapped;   /* pool bytes mapped now */
  uint64_t peak;     /* most pool bytes mapped at once */
  uint64_t events;   /* times the pool grew (initial mapping not counted) */
  uint64_t trims;    /* times a trim unmapped something */
  uint64_t trimmed;  /* bytes trims unmapped */
  uint64_t refusals; /* targets the host could not reach (device full / maximum) */
  uint64_t wakeups;  /* passes of the service thread (it backs off when idle) */
} dm_grower_stats_t;
void dm_grower_stats(dm_grower_t *g, dm_grower_stats_t *out);

#endif
