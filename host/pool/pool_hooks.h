/*
 * pool_hooks.h — the MAM host pool behind cuMemAlloc/cuMemFree (contract
 * between the shim's hook list and host/pool).
 *
 * The shim's hooks for cuMemAlloc_v2, cuMemAllocPitch_v2, cuMemFree_v2 and
 * cuMemGetInfo_v2 call these when dm_pool_hooks_enabled() is true (option
 * DEVMALLOC_HOST_POOL is not "off"); otherwise they call the real driver entry
 * point directly. `real_*` are the driver's own entry points, which the pool
 * uses to obtain its chunks, to pass through foreign pointers and to fall back
 * when the device is full. Pools are per context (the current one).
 *
 * Thread safety: all functions may be called from any thread at once.
 */
#ifndef DM_POOL_HOOKS_H
#define DM_POOL_HOOKS_H
#include <stddef.h>
#include <cuda.h>

typedef CUresult (*dm_real_mem_alloc_fn)(CUdeviceptr *dptr, size_t bytes);
typedef CUresult (*dm_real_mem_alloc_pitch_fn)(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height,
                                               unsigned int elem);
typedef CUresult (*dm_real_mem_free_fn)(CUdeviceptr dptr);
typedef CUresult (*dm_real_mem_get_info_fn)(size_t *free_b, size_t *total_b);

int dm_pool_hooks_enabled(void);
CUresult dm_pool_mem_alloc(CUdeviceptr *dptr, size_t bytes, dm_real_mem_alloc_fn real_alloc);
CUresult dm_pool_mem_alloc_pitch(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height,
                                 unsigned int elem, dm_real_mem_alloc_fn real_alloc);
CUresult dm_pool_mem_free(CUdeviceptr dptr, dm_real_mem_free_fn real_free);
CUresult dm_pool_mem_get_info(size_t *free_b, size_t *total_b, dm_real_mem_get_info_fn real_get_info);
/* Print the pools' statistics (called by the shim at exit when stats are on). */
void dm_pool_print_stats(void *file);

#endif
