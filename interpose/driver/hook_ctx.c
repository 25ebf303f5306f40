/*
 * hook_ctx.c — the heap-size limit (cuCtxSetLimit/cuCtxGetLimit with
 * CU_LIMIT_MALLOC_HEAP_SIZE, virtualized per context; other limits pass
 * through) and context lifetime (cuCtxDestroy, primary context retain,
 * release and reset tear down the context's heap).
 *
 * Limit rules are in limit.c; in short: before the context's heap exists a
 * new value is recorded for it and also given to the stock driver; after,
 * only the same value succeeds, another gives CUDA_ERROR_INVALID_VALUE (what
 * the stock driver answers after a malloc-using launch). A value above the
 * device's memory is the stock driver's to answer and is not recorded when it
 * refuses it.
 *
 * May call: bind.c, ctxtab.c, owners.c, driver.c, state.c, jit_ahead.c, the
 * parts' tables (dm_pool_ops), options/.
 *
 * Locking: the context table's (ctxtab.c) and the owner lock (owners.c),
 * never both here at once; the driver call runs unlocked.
 */
#include "shim.h"

static CUcontext current_ctx(void) {
  CUcontext c = NULL;
  return dm_drv.cuCtxGetCurrent(&c) == CUDA_SUCCESS ? c : NULL;
}

/* More than the current device's memory: no heap of that size can exist. */
static int beyond_device(size_t value) {
  CUdevice dev;
  size_t total = 0;
  return dm_drv.cuCtxGetDevice(&dev) == CUDA_SUCCESS &&
         dm_drv.cuDeviceTotalMem_v2(&total, dev) == CUDA_SUCCESS && total && value > total;
}

CUresult dm_h_ctx_set_limit(dm_pfn_cuCtxSetLimit real, CUlimit limit, size_t value) {
  CUcontext ctx;
  if (limit != CU_LIMIT_MALLOC_HEAP_SIZE || !(ctx = current_ctx())) return real(limit, value);
  if (beyond_device(value)) {
    /* The stock driver judges it (and refuses it): nothing is recorded. */
    CUresult r = real(limit, value);
    if (r != CUDA_SUCCESS) {
      dm_log(DM_LOG_INFO,
             "cuCtxSetLimit(MALLOC_HEAP_SIZE, %zu): more than the device's memory; "
             "the driver's answer stands (%s)",
             value, dm_cu_err(r));
      return r;
    }
  }
  switch (dm_ctx_limit_set(ctx, value)) {
  case DM_LIMIT_NOOP: return CUDA_SUCCESS;
  case DM_LIMIT_REJECT:
    dm_log(DM_LOG_INFO,
           "cuCtxSetLimit(MALLOC_HEAP_SIZE, %zu) refused: the heap of context %p already "
           "exists with another size (set the limit before the first launch, or use "
           "DEVMALLOC_HEAP_SIZE)",
           value, (void *)ctx);
    return CUDA_ERROR_INVALID_VALUE;
  case DM_LIMIT_RECORD:
  case DM_LIMIT_RESIZE:
  default: {
    CUresult r = real(limit, value);
    if (r != CUDA_SUCCESS && dm_candidates()) {
      dm_log(DM_LOG_DEBUG, "stock heap refused limit %zu (%s); devmalloc heap will use it", value,
             dm_cu_err(r));
      r = CUDA_SUCCESS;
    }
    /* Modules with devmalloc are loaded: make the heap now, not inside the
     * application's first (maybe timed) kernel launch. */
    if (r == CUDA_SUCCESS && dm_candidates()) dm_prepare_heap(ctx);
    return r;
  }
  }
}

CUresult dm_h_ctx_get_limit(dm_pfn_cuCtxGetLimit real, size_t *pvalue, CUlimit limit) {
  CUcontext ctx;
  size_t v;
  if (limit != CU_LIMIT_MALLOC_HEAP_SIZE || !pvalue || !(ctx = current_ctx())) return real(pvalue, limit);
  if (dm_ctx_limit_get(ctx, &v)) {
    *pvalue = v;
    return CUDA_SUCCESS;
  }
  return real(pvalue, limit);
}

/* Forget everything about ctx; free its heap first when it still lives. */
static void forget_ctx(CUcontext ctx, int alive) {
  if (!ctx) return;
  dm_tls_busy++;
  dm_owner_lock();
  dm_owner_forget_ctx(ctx);
  dm_owner_unlock();
  dm_pool_ops->forget_context(ctx);
  CUcontext prev = NULL;
  int pushed = alive && dm_drv.cuCtxPushCurrent_v2(ctx) == CUDA_SUCCESS;
  dm_ctx_teardown(ctx, alive);
  if (pushed) dm_drv.cuCtxPopCurrent_v2(&prev);
  dm_tls_busy--;
}

CUresult dm_h_ctx_destroy(dm_pfn_cuCtxDestroy_v2 real, CUcontext ctx) {
  forget_ctx(ctx, 1);
  return real(ctx);
}

/* The first retain also reads the program's re-linked images ahead
 * (jit_ahead.c), while the driver creates the context. */
CUresult dm_h_primary_retain(dm_pfn_cuDevicePrimaryCtxRetain real, CUcontext *pctx, CUdevice dev) {
  int ahead = dm_jit_ahead_begin(dev);
  CUresult r = real(pctx, dev);
  if (ahead) dm_jit_ahead_end();
  if (r == CUDA_SUCCESS && pctx) dm_ctx_primary_retained(dev, *pctx);
  return r;
}

/* The release that drops the last reference destroys the context; our count
 * may miss references taken elsewhere, so the heap is only read (stats)
 * before, and forgotten after the driver says the context is inactive. */
CUresult dm_h_primary_release(dm_pfn_cuDevicePrimaryCtxRelease_v2 real, CUdevice dev) {
  CUcontext ctx = dm_ctx_primary_of(dev);
  if (dm_ctx_primary_released(dev) == 0 && ctx) dm_ctx_snapshot(ctx);
  CUresult r = real(dev);
  unsigned int flags = 0;
  int active = 1;
  if (r == CUDA_SUCCESS && ctx && dm_drv.cuDevicePrimaryCtxGetState(dev, &flags, &active) == CUDA_SUCCESS &&
      !active)
    forget_ctx(ctx, 0);
  return r;
}

CUresult dm_h_primary_reset(dm_pfn_cuDevicePrimaryCtxReset_v2 real, CUdevice dev) {
  forget_ctx(dm_ctx_primary_of(dev), 1);
  return real(dev);
}
