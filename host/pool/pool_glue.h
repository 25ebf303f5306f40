/*
 * pool_glue.h — entry points of pool_hooks.c beyond the contract in
 * pool_hooks.h: settings and driver table from the shim, reconfiguration,
 * context teardown and statistics. Used by the shim (interpose/driver/parts.c),
 * the host tests (with a fake driver) and bench/pool_bench (which calls the
 * hooks directly).
 *
 * Locking: like pool_hooks.h, every function may be called from any thread;
 * dm_pool_hooks_forget_context and dm_pool_hooks_shutdown may race with
 * allocations and frees (a context's pool lives until its last user is done);
 * dm_pool_hooks_configure must not race with them.
 * Error convention: DM_POOL_OK (0) or a positive DM_POOL_E* code (pool.h).
 */
#ifndef DM_POOL_GLUE_H
#define DM_POOL_GLUE_H
#include <stdint.h>
#include <cuda.h>

#include "pool.h"
#include "pool_config.h"

/* The driver entry points the hooks call besides the real_* arguments. A
 * NULL member is looked up with dlsym in libcuda.so.1 on first use. Real
 * cuMemFree/cuMemGetInfo passed to the hooks are preferred over the table's
 * once seen. */
typedef struct dm_pool_driver {
  CUresult (*ctx_get_current)(CUcontext *ctx);
  CUresult (*ctx_synchronize)(void);
  CUresult (*mem_get_info)(size_t *free_b, size_t *total_b);
  CUresult (*mem_free)(CUdeviceptr dptr);
  /* To synchronize a block's own context when another one is current. */
  CUresult (*ctx_push_current)(CUcontext ctx);
  CUresult (*ctx_pop_current)(CUcontext *ctx);
} dm_pool_driver_t;

void dm_pool_hooks_set_driver(const dm_pool_driver_t *drv);

/* The shim's settings, from its options table, given once before the first
 * hook runs (without them the pool reads DEVMALLOC_HOST_POOL and
 * DEVMALLOC_HOST_POOL_SYNC from the environment itself); `log` takes one
 * message line without prefix (NULL: stderr). */
typedef struct dm_pool_settings {
  dm_pool_mode_t mode;
  size_t bytes;
  int sync_free;
  void (*log)(const char *line);
  int given; /* set by dm_pool_hooks_settings */
} dm_pool_settings_t;
void dm_pool_hooks_settings(const dm_pool_settings_t *s);

/* Replace the configuration read from the environment: `value` as for
 * DEVMALLOC_HOST_POOL, `sync_free` as for DEVMALLOC_HOST_POOL_SYNC (1: a
 * pooled cuMemFree first synchronizes the context, as the real one does).
 * Existing pools keep their chunks. DM_POOL_EINVAL for a bad value. */
int dm_pool_hooks_configure(const char *value, int sync_free);

/* The context is being destroyed (cuCtxDestroy, cuDevicePrimaryCtxReset or
 * Release to zero): drop its pool without freeing its chunks (the driver
 * frees them with the context). Call before the real destroy. */
void dm_pool_hooks_forget_context(CUcontext ctx);

/* Destroy every pool, freeing its chunks through the driver (tests, bench). */
void dm_pool_hooks_shutdown(void);

#define DM_POOL_HOOK_COUNTERS(X)                                                  \
  X(pools_created, "per-context pools created")                                   \
  X(fallback_allocs, "allocations the pool could not serve, given to the driver") \
  X(passthrough_allocs, "allocations passed through (size 0 or no context)")      \
  X(passthrough_frees, "frees of pointers not from a pool, given to the driver")  \
  X(foreign_frees, "of those, rejected by the driver (reported)")                 \
  X(pool_rejected_frees, "double or interior frees in a pool (reported)")         \
  X(free_syncs, "context synchronizations before a pooled free")

typedef struct dm_pool_hook_stats {
#define DM_POOL_HOOK_FIELD(name, doc) uint64_t name;
  DM_POOL_HOOK_COUNTERS(DM_POOL_HOOK_FIELD)
#undef DM_POOL_HOOK_FIELD
} dm_pool_hook_stats_t;

void dm_pool_hooks_get_stats(dm_pool_hook_stats_t *out);
/* Pool statistics of context `ctx`; DM_POOL_ENOTOURS if it has no pool. */
int dm_pool_hooks_ctx_stats(CUcontext ctx, dm_pool_stats_t *out);

#endif
