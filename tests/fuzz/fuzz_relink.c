/*
 * fuzz_relink.c — libFuzzer target for the re-link input paths
 * (interpose/relink/relink.c): the image as the load hooks hand it over — bounded
 * by the pre-scan when it came without a size (guarded.h), or with its size
 * — classified, read, decompressed and given to a fake JIT linker whose
 * link always fails (so nothing is cached and no GPU is needed).
 */
#include "shim.h"
#include "jit_link.h"
#include "relink.h"
#include "guarded.h"
#include <cuda.h>

static CUresult f_link_create(unsigned n, CUjit_option *o, void **v, CUlinkState *ls) {
  *ls = (CUlinkState)malloc(1);
  return CUDA_SUCCESS;
}
static CUresult f_link_add(CUlinkState ls, CUjitInputType t, void *data, size_t size, const char *name,
                           unsigned n, CUjit_option *o, void **v) {
  if (!size || ((const char *)data)[size - 1] != 0) /* PTX is handed over NUL-ended */
    abort();
  return CUDA_SUCCESS;
}
static CUresult f_link_complete(CUlinkState ls, void **img, size_t *sz) { return CUDA_ERROR_INVALID_PTX; }
static CUresult f_link_destroy(CUlinkState ls) {
  free(ls);
  return CUDA_SUCCESS;
}
#include "fake_jit.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  setenv("DEVMALLOC_CACHE_DIR", "off", 1);
  setenv("DEVMALLOC_JIT", "force", 1);
  dm_jit_set_resolver(fake_resolve);
  return 0;
}

static void relink(const void *image, const void *body, size_t n) {
  const void *out = NULL;
  size_t sz;
  char why[300];
  if (dm_relink_sized(image, body, n, &out, &sz, why, sizeof why) == 1) dm_relink_free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  relink(data, data, size);
  unsigned char *p;
  size_t n;
  const void *img = guarded_bound(data, size, &p, &n);
  if (img) relink(p, img, n);
  return 0;
}
