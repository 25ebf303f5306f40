/*
 * hook_sync.c — synchronization hooks (cuStreamSynchronize, its _ptsz
 * variant, cuEventSynchronize, cuCtxSynchronize_v2): the call runs first,
 * exactly as asked; after it returns, the context's counters may be sampled
 * for the trace (trace.c). With tracing and stats off they only pass through.
 * (cuCtxSynchronize without arguments is not hooked: the hook generator
 * needs a parameter.) With DEVMALLOC_TRIM (on by default), a successful
 * synchronization may also trim the context's heap if it grows (ctxtab.c:
 * at most every 2 seconds, when enough mapped memory is free).
 *
 * Locking: none here (trace.c).
 */
#include "obs.h"

static CUcontext current(void) {
  CUcontext c = NULL;
  return dm_drv.cuCtxGetCurrent(&c) == CUDA_SUCCESS ? c : NULL;
}

CUresult dm_h_stream_sync(dm_pfn_cuStreamSynchronize real, CUstream s) {
  CUresult r = real(s);
  if (r == CUDA_SUCCESS && dm_options()->trim && dm_options()->grow) dm_ctx_trim(dm_stream_ctx(s));
  if (dm_obs_sampling()) dm_obs_sync(dm_stream_ctx(s));
  return r;
}

CUresult dm_h_event_sync(dm_pfn_cuEventSynchronize real, CUevent ev) {
  CUresult r = real(ev);
  if (r == CUDA_SUCCESS && dm_options()->trim && dm_options()->grow) dm_ctx_trim(current());
  if (dm_obs_sampling()) dm_obs_sync(current());
  return r;
}

CUresult dm_h_ctx_sync(dm_pfn_cuCtxSynchronize_v2 real, CUcontext ctx) {
  CUresult r = real(ctx);
  if (r == CUDA_SUCCESS && dm_options()->trim && dm_options()->grow) dm_ctx_trim(ctx ? ctx : current());
  if (dm_obs_sampling()) dm_obs_sync(ctx ? ctx : current());
  return r;
}
