/*
 * heap_priv.h — the host runtime's heap object, shared by heap_runtime.c
 * (fixed heaps, bind, stats, verify) and heap/growth.c (heaps that grow).
 * Private: not installed.
 */
#ifndef DM_HEAP_PRIV_H
#define DM_HEAP_PRIV_H
#include <cuda.h>
#include "devmalloc.h"
#include "dm_internal.h"

struct dm_rt_growth; /* heap/growth.c */

struct devmalloc_heap {
  CUcontext ctx;
  CUdeviceptr mem;  /* what cuMemAlloc returned (0: a heap that grows) */
  CUdeviceptr base; /* POOL_ALIGN-aligned start of the heap inside mem */
  size_t bytes;
  dm_layout_t layout;
  dm_heap_t image;             /* the dm_heap_t as written to the device */
  CUdeviceptr desc;            /* device address of that dm_heap_t */
  CUstream stream;             /* private, non-blocking */
  struct dm_rt_growth *growth; /* NULL: a fixed heap */
  /* growth.c's part of stats (mapped bytes, events, ...) and destruction,
   * called through pointers so that programs making only fixed heaps do not
   * link the VMM calls */
  devmalloc_status_t (*growth_stats)(devmalloc_heap_t *h, devmalloc_stats_t *out);
  devmalloc_status_t (*growth_destroy)(devmalloc_heap_t *h);
};

/* Writes into device memory through the heap's own stream (the formatters of
 * core/layout.c take these as callbacks): heap_runtime.c. */
typedef struct {
  CUdeviceptr base;
  CUstream stream;
  CUresult err;
} dm_dev_writer_t;
void dm_dev_write(void *writer, uint64_t off, const void *src, uint64_t n);
/* Fill count 32-bit words at off with v (in the writer's stream, ordered
 * before its next write, which waits for both). */
void dm_dev_fill32(void *writer, uint64_t off, uint32_t v, uint64_t count);
/* Arenas for a heap of `bytes` on the current context's device (dm_arenas_for
 * with its SM count): heap_runtime.c. */
uint32_t dm_rt_arena_count(uint64_t bytes);
#endif
