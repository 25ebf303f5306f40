/*
 * hook_sync.c — synchronization hooks (cuStreamSynchronize, its _ptsz
 * variant, cuEventSynchronize, cuCtxSynchronize and cuCtxSynchronize_v2):
 * the call runs first, exactly as asked; after it returns, the context's
 * counters may be sampled for the trace (trace.c). With tracing and stats off
 * they only pass through. (Runtimes before CUDA 13 synchronize a device
 * through cuCtxSynchronize, 13 through cuCtxSynchronize_v2.)
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
  if (dm_obs_sampling()) dm_obs_sync(dm_stream_ctx(s));
  return r;
}

CUresult dm_h_event_sync(dm_pfn_cuEventSynchronize real, CUevent ev) {
  CUresult r = real(ev);
  if (dm_obs_sampling()) dm_obs_sync(current());
  return r;
}

CUresult dm_h_ctx_sync_current(dm_pfn_cuCtxSynchronize real) {
  CUresult r = real();
  if (dm_obs_sampling()) dm_obs_sync(current());
  return r;
}

CUresult dm_h_ctx_sync(dm_pfn_cuCtxSynchronize_v2 real, CUcontext ctx) {
  CUresult r = real(ctx);
  if (dm_obs_sampling()) dm_obs_sync(ctx ? ctx : current());
  return r;
}
