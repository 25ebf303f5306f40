/*
 * hook_launch.c — kernel launch hooks: make sure the kernel's module is bound
 * in the launch's context (bind.c), let the trace sample its counters when due
 * (trace.c), then launch exactly as asked.
 *
 * May call: bind.c, trace.c, real.c.
 *
 * Locking: none here (bind.c, trace.c).
 */
#include "obs.h"

/* Bind, then trace (after binding: the first launch creates the heap). */
static void before(CUfunction f, CUstream s) {
  dm_prepare_launch(f, s);
  if (dm_obs_sampling()) dm_obs_launch(f, s);
}

/* In a _ptsz entry point the NULL stream is the per-thread stream. */
static CUstream per_thread(CUstream s, int ptsz) { return !s && ptsz ? CU_STREAM_PER_THREAD : s; }

CUresult dm_h_launch_kernel(dm_pfn_cuLaunchKernel real, CUfunction f, unsigned int gx, unsigned int gy,
                            unsigned int gz, unsigned int bx, unsigned int by, unsigned int bz,
                            unsigned int shmem, CUstream s, void **params, void **extra) {
  before(f, per_thread(s, real == (dm_pfn_cuLaunchKernel)dm_real(DM_ID_cuLaunchKernel_ptsz)));
  return real(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
}

CUresult dm_h_launch_kernel_ex(dm_pfn_cuLaunchKernelEx real, const CUlaunchConfig *config, CUfunction f,
                               void **params, void **extra) {
  before(f, per_thread(config ? config->hStream : NULL,
                       real == (dm_pfn_cuLaunchKernelEx)dm_real(DM_ID_cuLaunchKernelEx_ptsz)));
  return real(config, f, params, extra);
}

CUresult dm_h_launch_coop(dm_pfn_cuLaunchCooperativeKernel real, CUfunction f, unsigned int gx,
                          unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by, unsigned int bz,
                          unsigned int shmem, CUstream s, void **params) {
  before(f, per_thread(
                s, real == (dm_pfn_cuLaunchCooperativeKernel)dm_real(DM_ID_cuLaunchCooperativeKernel_ptsz)));
  return real(f, gx, gy, gz, bx, by, bz, shmem, s, params);
}
