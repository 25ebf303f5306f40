/*
 * hook_mem.c — cuMemAlloc/cuMemAllocPitch/cuMemFree/cuMemGetInfo: the host
 * pool (dm_pool_ops: pool/pool_hooks.h) when it is enabled (DEVMALLOC_HOST_POOL not off),
 * otherwise the driver, untouched.
 *
 * May call: real.c, the parts' tables (dm_pool_ops).
 *
 * Locking: none here (the pool's own).
 */
#include "shim.h"

CUresult dm_h_mem_alloc(dm_pfn_cuMemAlloc_v2 real, CUdeviceptr *dptr, size_t bytes) {
  if (!dm_pool_ops->enabled()) return real(dptr, bytes);
  return dm_pool_ops->mem_alloc(dptr, bytes, real);
}

CUresult dm_h_mem_alloc_pitch(dm_pfn_cuMemAllocPitch_v2 real, CUdeviceptr *dptr, size_t *pitch, size_t width,
                              size_t height, unsigned int elem) {
  if (!dm_pool_ops->enabled()) return real(dptr, pitch, width, height, elem);
  dm_real_mem_alloc_fn alloc = (dm_real_mem_alloc_fn)dm_real(DM_ID_cuMemAlloc_v2);
  return dm_pool_ops->mem_alloc_pitch(dptr, pitch, width, height, elem, alloc);
}

CUresult dm_h_mem_free(dm_pfn_cuMemFree_v2 real, CUdeviceptr dptr) {
  if (!dm_pool_ops->enabled()) return real(dptr);
  return dm_pool_ops->mem_free(dptr, real);
}

CUresult dm_h_mem_get_info(dm_pfn_cuMemGetInfo_v2 real, size_t *free_b, size_t *total_b) {
  if (!dm_pool_ops->enabled()) return real(free_b, total_b);
  return dm_pool_ops->mem_get_info(free_b, total_b, real);
}
