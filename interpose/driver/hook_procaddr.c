/*
 * hook_procaddr.c — cuGetProcAddress / cuGetProcAddress_v2: ask the driver,
 * then swap the answer for our wrapper when it is a hooked entry point
 * (hooks.c: exact pointer match, which keeps _ptsz and versioned variants
 * distinct because the driver already chose among them). The query for
 * cuGetProcAddress itself is answered the same way, so static cudart, which
 * fetches everything through it, keeps reaching us.
 *
 * May call: hooks.c (dm_hook_answer). hooks.c also calls this file (its
 * table holds the wrappers of these handlers): the one pair of files that
 * call each other, because the wrapper answered must come from the same
 * table as the hook that answers it; see hooks.c.
 *
 * Locking: none.
 */
#include "shim.h"

CUresult dm_h_get_proc_v1(dm_pfn_cuGetProcAddress real, const char *symbol, void **pfn, int cudaVersion,
                          cuuint64_t flags) {
  CUresult r = real(symbol, pfn, cudaVersion, flags);
  if (r == CUDA_SUCCESS && pfn && *pfn) *pfn = dm_hook_answer(symbol, *pfn, cudaVersion, flags);
  return r;
}

CUresult dm_h_get_proc_v2(dm_pfn_cuGetProcAddress_v2 real, const char *symbol, void **pfn, int cudaVersion,
                          cuuint64_t flags, CUdriverProcAddressQueryResult *status) {
  CUresult r = real(symbol, pfn, cudaVersion, flags, status);
  if (r == CUDA_SUCCESS && pfn && *pfn) *pfn = dm_hook_answer(symbol, *pfn, cudaVersion, flags);
  return r;
}
