/*
 * hook_sync.c — synchronization hooks (cuStreamSynchronize, its _ptsz
 * variant, cuEventSynchronize, cuCtxSynchronize and cuCtxSynchronize_v2):
 * the call runs first, exactly as asked; after it returns, the context's
 * counters may be sampled for the trace (trace.c). With tracing and stats off
 * they only pass through. (Runtimes before CUDA 13 synchronize a device
 * through cuCtxSynchronize, 13 through cuCtxSynchronize_v2.) With
 * DEVMALLOC_TRIM (on by default), a successful synchronization may also trim
 * the context's heap if it grows (ctxtab.c: at most every 2 seconds, when
 * enough mapped memory is free).
 *
 * May call: ctxtab.c, trace.c, driver.c, options/.
 *
 * Locking: none here (trace.c).
 */
#include "obs.h"

static CUcontext current(void) {
  CUcontext c = NULL;
  return dm_drv.cuCtxGetCurrent(&c) == CUDA_SUCCESS ? c : NULL;
}

/* After a synchronization that returned r, in context ctx: trim a heap that
 * grows, sample for the trace. */
static CUresult after_sync(CUresult r, CUcontext ctx) {
  if (r == CUDA_SUCCESS && dm_options()->trim && dm_options()->grow) dm_ctx_trim(ctx);
  if (dm_obs_sampling()) dm_obs_sync(ctx);
  return r;
}

CUresult dm_h_stream_sync(dm_pfn_cuStreamSynchronize real, CUstream s) {
  return after_sync(real(s), dm_stream_ctx(s));
}

CUresult dm_h_event_sync(dm_pfn_cuEventSynchronize real, CUevent ev) {
  return after_sync(real(ev), current());
}

CUresult dm_h_ctx_sync_current(dm_pfn_cuCtxSynchronize real) { return after_sync(real(), current()); }

CUresult dm_h_ctx_sync(dm_pfn_cuCtxSynchronize_v2 real, CUcontext ctx) {
  return after_sync(real(ctx), ctx ? ctx : current());
}
