/*
 * pool.h — the MAM pool core: best-fit sub-allocation of large device
 * "chunks" (after MAM, "A Memory Allocation Manager for GPUs", Aknesil &
 * Unat), independent of CUDA.
 *
 * A pool owns chunks obtained from a chunk source (callbacks; in the shim
 * they call the driver's real cuMemAlloc/cuMemFree, in the tests they hand
 * out fake address ranges). Each chunk is tiled by segments, used or free.
 * Free segments sit in an AVL tree keyed by (size, address): allocation takes
 * the smallest free segment that fits (best fit, lowest address on ties) and
 * splits off the rest. All segments sit in an AVL tree keyed by address: free
 * finds the segment there and merges it with its free neighbours of the same
 * chunk. Both are O(log n) in the number of segments.
 *
 * Sizes are rounded up to the pool's alignment (a power of two, >= 256 B, as
 * cudaMalloc promises), so every address handed out is aligned.
 *
 * Lifecycle: dm_pool_create() allocates no device memory. The first
 * dm_pool_alloc() obtains the first chunk: `initial_bytes` from the config,
 * or in auto mode (initial_bytes == 0) the largest the source will give,
 * trying decreasing sizes below source->avail() minus a reserve. When no free
 * segment fits, the pool grows by another chunk (`grow_bytes`, halving down
 * to the request's size when the source refuses). If that fails too, chunks
 * that are entirely free are given back to the source and growth is retried;
 * then dm_pool_alloc() returns DM_POOL_ENOMEM and the caller falls back to
 * its real allocator. Chunks are otherwise kept until dm_pool_trim() or
 * dm_pool_destroy().
 *
 * Locking: one mutex per pool guards everything in it; every function below
 * may be called from any thread at once (except create/destroy, which must
 * not race with other calls on the same pool). The source callbacks are
 * called with the pool mutex held: they must not call back into the pool.
 *
 * Error convention: functions return 0 (DM_POOL_OK) or a positive DM_POOL_E*
 * code; they never abort. Misuse by the caller (double free, pointer inside
 * a segment) is counted and reported through config.report (default: one
 * line on stderr), and leaves the pool unchanged.
 */
#ifndef DM_POOL_H
#define DM_POOL_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum {
  DM_POOL_OK = 0,
  DM_POOL_EINVAL = 1,   /* bad argument, or a pointer inside a used segment */
  DM_POOL_ENOMEM = 2,   /* no segment fits and the source gave no chunk */
  DM_POOL_ENOTOURS = 3, /* the address lies in none of the pool's chunks */
  DM_POOL_EDOUBLE = 4   /* the address lies in a free segment (double free) */
};

typedef struct dm_pool dm_pool_t;

typedef struct dm_pool_source {
  void *ctx;
  /* Obtain `bytes` of device memory; 0 and *base set on success. */
  int (*chunk_alloc)(void *ctx, size_t bytes, uint64_t *base);
  /* Give back a chunk obtained from chunk_alloc (base and bytes as given). */
  void (*chunk_free)(void *ctx, uint64_t base, size_t bytes);
  /* Bytes the source could supply now (auto mode); NULL: unknown. */
  size_t (*avail)(void *ctx);
} dm_pool_source_t;

typedef void (*dm_pool_report_fn)(void *ctx, const char *line);

typedef struct dm_pool_config {
  size_t initial_bytes;     /* first chunk; 0: auto (largest the source gives) */
  size_t grow_bytes;        /* preferred size of later chunks; 0: see below */
  size_t alignment;         /* power of two >= 256; 0: 256 */
  size_t granule;           /* chunk sizes are multiples of it; 0: 2 MiB */
  size_t auto_reserve;      /* auto mode leaves this much of avail(); 0: default */
  dm_pool_report_fn report; /* NULL: one line on stderr */
  void *report_ctx;
  const char *name; /* used in reports and stats titles */
} dm_pool_config_t;
/* Defaults: grow_bytes = initial_bytes, or in auto mode 1/8 of the first
 * chunk (at least 64 MiB); auto_reserve = max(256 MiB, avail/32), at most
 * half of avail. */

/* Statistics. Counters only grow; gauges are the current state. */
#define DM_POOL_COUNTERS(X)                                                   \
  X(allocs, "allocations served")                                             \
  X(frees, "frees served")                                                    \
  X(failed_allocs, "allocations the pool could not serve (caller fell back)") \
  X(double_frees, "frees of an address in a free segment")                    \
  X(invalid_frees, "frees of an address inside a used segment")               \
  X(chunks_obtained, "chunks obtained from the source")                       \
  X(chunk_refusals, "chunk requests the source refused")                      \
  X(chunks_released, "chunks given back to the source")                       \
  X(splits, "segments split on allocation")                                   \
  X(merges, "segments merged on free")

#define DM_POOL_GAUGES(X)                                   \
  X(chunks, "chunks held")                                  \
  X(chunk_bytes, "bytes held in chunks")                    \
  X(used_bytes, "bytes in used segments (aligned sizes)")   \
  X(peak_used_bytes, "peak of used_bytes")                  \
  X(requested_bytes, "bytes requested by live allocations") \
  X(used_segments, "live allocations")                      \
  X(free_segments, "free segments")                         \
  X(largest_free, "largest free segment")

typedef struct dm_pool_stats {
#define DM_POOL_FIELD(name, doc) uint64_t name;
  DM_POOL_COUNTERS(DM_POOL_FIELD)
  DM_POOL_GAUGES(DM_POOL_FIELD)
#undef DM_POOL_FIELD
} dm_pool_stats_t;

/* Create an empty pool (no device memory yet). DM_POOL_EINVAL for a bad
 * alignment or missing callbacks, DM_POOL_ENOMEM if host memory ran out. */
int dm_pool_create(const dm_pool_config_t *cfg, const dm_pool_source_t *src, dm_pool_t **out);
/* Give every chunk back to the source and free the pool. Live allocations
 * become invalid. */
void dm_pool_destroy(dm_pool_t *p);

/* fork(): take (1) the pool's lock before it, release (0) it after it in the
 * parent, initialize it afresh (-1) in the child. */
void dm_pool_fork_lock(dm_pool_t *p, int take);

/* Allocate `bytes` (> 0); *addr is aligned to the pool's alignment. */
int dm_pool_alloc(dm_pool_t *p, size_t bytes, uint64_t *addr);
/* Free the allocation starting at `addr`. DM_POOL_ENOTOURS when `addr` is in
 * none of the pool's chunks (nothing reported: the caller passes it on);
 * DM_POOL_EDOUBLE / DM_POOL_EINVAL (reported and counted) when it is in a
 * chunk but not the start of a live allocation. *bytes (if not NULL) gets
 * the allocation's requested size on success. */
int dm_pool_free(dm_pool_t *p, uint64_t addr, size_t *bytes);
/* 1 if `addr` lies in one of the pool's chunks. */
int dm_pool_contains(dm_pool_t *p, uint64_t addr);
/* Bytes in free segments (what the pool could still hand out). */
size_t dm_pool_free_bytes(dm_pool_t *p);
/* Give entirely free chunks back to the source; returns bytes released. */
size_t dm_pool_trim(dm_pool_t *p);

void dm_pool_get_stats(dm_pool_t *p, dm_pool_stats_t *out);
size_t dm_pool_alignment(const dm_pool_t *p);
/* Print `s` as "title: name value  # doc" lines to `f`. */
void dm_pool_stats_print(const dm_pool_stats_t *s, FILE *f, const char *title);

/* Check every invariant of the pool (both trees, segment tiling of each
 * chunk, no two adjacent free segments in one chunk, free-tree membership,
 * alignment, gauges). 0 or DM_POOL_EINVAL with *why set. O(n): tests. */
int dm_pool_check(dm_pool_t *p, const char **why);

/* Walk the segments in address order (tests): calls fn for each. */
void dm_pool_walk(dm_pool_t *p,
                  void (*fn)(void *arg, uint64_t addr, uint64_t size, int used, uint64_t chunk_base),
                  void *arg);

const char *dm_pool_strerror(int err);

#endif
