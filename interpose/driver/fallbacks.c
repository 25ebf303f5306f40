/*
 * fallbacks.c — weak stand-ins for the parts other modules of the shim
 * provide (interpose/relink*.c: load-time re-link; interpose/pool_hooks.c:
 * host pool). The real definitions, linked as objects into the same .so,
 * replace these. With the stand-ins the shim re-links nothing and the pool
 * is off.
 *
 * Locking: none.
 */
#include "shim.h"
#include "relink/relink.h"
#include "pool/pool_hooks.h"

#include <stdio.h>

#define DM_WEAK __attribute__((weak))

DM_WEAK int dm_relink_image(const void *image, const void **out, size_t *out_size,
                            char *why, size_t whylen) {
  if (why && whylen) snprintf(why, whylen, "load-time re-link not built into this shim");
  return 0;
}

DM_WEAK int dm_relink_sized(const void *image, const void *body, size_t len,
                            const void **out, size_t *out_size, char *why, size_t whylen) {
  return dm_relink_image(image, out, out_size, why, whylen);
}

DM_WEAK int dm_relink_file(const char *path, const void **out, size_t *out_size,
                           char *why, size_t whylen) {
  if (why && whylen) snprintf(why, whylen, "load-time re-link not built into this shim");
  return 0;
}

DM_WEAK void dm_relink_free(const void *image) {}

DM_WEAK int dm_pool_hooks_enabled(void) { return 0; }

DM_WEAK CUresult dm_pool_mem_alloc(CUdeviceptr *dptr, size_t bytes,
                                   dm_real_mem_alloc_fn real_alloc) {
  return real_alloc(dptr, bytes);
}

DM_WEAK CUresult dm_pool_mem_alloc_pitch(CUdeviceptr *dptr, size_t *pitch, size_t width,
                                         size_t height, unsigned int elem,
                                         dm_real_mem_alloc_fn real_alloc) {
  dm_pfn_cuMemAllocPitch_v2 p = (dm_pfn_cuMemAllocPitch_v2)dm_real(DM_ID_cuMemAllocPitch_v2);
  return p ? p(dptr, pitch, width, height, elem) : CUDA_ERROR_NOT_INITIALIZED;
}

DM_WEAK CUresult dm_pool_mem_free(CUdeviceptr dptr, dm_real_mem_free_fn real_free) {
  return real_free(dptr);
}

DM_WEAK CUresult dm_pool_mem_get_info(size_t *free_b, size_t *total_b,
                                      dm_real_mem_get_info_fn real_get_info) {
  return real_get_info(free_b, total_b);
}

DM_WEAK void dm_pool_print_stats(void *file) {}
