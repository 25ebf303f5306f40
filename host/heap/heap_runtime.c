/*
 * heap_runtime.c — devmalloc's host runtime (include/devmalloc.h): creates a
 * heap in a context's device memory, formats it (a memset plus a few small
 * copies, see core/layout.c), binds it to modules and libraries by writing
 * their `devmalloc_heap_desc` global, reads its counters, verifies it, and
 * frees it.
 *
 * Error convention: devmalloc_status_t; CUDA failures map to
 * DEVMALLOC_ECUDA (or ENOMEM for allocation failures) and leave nothing
 * allocated behind.
 * Locking: none of its own. Each call makes the heap's context current for
 * its duration (push/pop), so any thread may call; a heap must not be used
 * while another thread destroys it.
 * Streams: every copy and memset goes through the heap's own non-blocking
 * stream and waits for that stream only, so creating or binding a heap never
 * touches the legacy stream and never breaks another thread's stream capture.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "devmalloc.h"
#include "dm_internal.h"

#include "heap_priv.h"

#define POOL_ALIGN (2ull << 20)

const char *devmalloc_status_string(devmalloc_status_t st) {
  switch (st) {
  case DEVMALLOC_OK: return "success";
  case DEVMALLOC_EINVAL: return "invalid argument";
  case DEVMALLOC_ENOMEM: return "out of device memory";
  case DEVMALLOC_ECUDA: return "CUDA driver call failed";
  case DEVMALLOC_ENOTFOUND: return "module not linked with devmalloc";
  }
  return "unknown status";
}

static devmalloc_status_t push(CUcontext ctx) {
  return cuCtxPushCurrent(ctx) == CUDA_SUCCESS ? DEVMALLOC_OK : DEVMALLOC_ECUDA;
}
static void pop(void) {
  CUcontext dummy;
  cuCtxPopCurrent(&dummy);
}

void dm_dev_write(void *ctx, uint64_t off, const void *src, uint64_t n) {
  dm_dev_writer_t *w = ctx;
  if (w->err == CUDA_SUCCESS) w->err = cuMemcpyHtoDAsync(w->base + off, src, n, w->stream);
  if (w->err == CUDA_SUCCESS) w->err = cuStreamSynchronize(w->stream); /* src is on the stack */
}

void dm_dev_fill32(void *ctx, uint64_t off, uint32_t v, uint64_t count) {
  dm_dev_writer_t *w = ctx;
  if (w->err == CUDA_SUCCESS) w->err = cuMemsetD32Async(w->base + off, v, count, w->stream);
}

static CUresult copy_to_device(const devmalloc_heap_t *h, CUdeviceptr dst, const void *src, size_t n) {
  CUresult r = cuMemcpyHtoDAsync(dst, src, n, h->stream);
  return r == CUDA_SUCCESS ? cuStreamSynchronize(h->stream) : r;
}

static CUresult copy_from_device(const devmalloc_heap_t *h, void *dst, CUdeviceptr src, size_t n) {
  CUresult r = cuMemcpyDtoHAsync(dst, src, n, h->stream);
  return r == CUDA_SUCCESS ? cuStreamSynchronize(h->stream) : r;
}

/* DM_ARENAS_PER_SM arenas per SM (the device picks one by SM and warp slot),
 * fewer in a small heap (see dm_arenas_for). */
uint32_t dm_rt_arena_count(uint64_t heap_bytes) {
  CUdevice dev;
  int sms = 0;
  if (cuCtxGetDevice(&dev) != CUDA_SUCCESS ||
      cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) != CUDA_SUCCESS || sms <= 0)
    sms = 1;
  return dm_arenas_for(heap_bytes, (uint32_t)sms);
}

/* Device memory whose start is POOL_ALIGN-aligned (buddy blocks are aligned
 * to their size up to that, and free() dispatches on 16 KiB alignment). */
static CUresult alloc_aligned(size_t bytes, CUdeviceptr *mem, CUdeviceptr *base) {
  CUresult r = cuMemAlloc(mem, bytes);
  if (r == CUDA_SUCCESS && (*mem % POOL_ALIGN) == 0) {
    *base = *mem;
    return r;
  }
  if (r == CUDA_SUCCESS) cuMemFree(*mem);
  if (r == CUDA_SUCCESS && bytes > SIZE_MAX - POOL_ALIGN) return CUDA_ERROR_OUT_OF_MEMORY;
  if (r != CUDA_SUCCESS) return r;
  r = cuMemAlloc(mem, bytes + POOL_ALIGN);
  if (r == CUDA_SUCCESS) *base = (*mem + POOL_ALIGN - 1) / POOL_ALIGN * POOL_ALIGN;
  return r;
}

devmalloc_status_t devmalloc_heap_create(CUcontext ctx, size_t bytes, devmalloc_heap_t **out) {
  if (!out) return DEVMALLOC_EINVAL;
  *out = NULL;
  if (!ctx && (cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx)) return DEVMALLOC_EINVAL;
  devmalloc_heap_t *h = calloc(1, sizeof *h);
  if (!h) return DEVMALLOC_ENOMEM;
  devmalloc_status_t st = push(ctx);
  if (st != DEVMALLOC_OK) {
    free(h);
    return st;
  }
  h->ctx = ctx;
  h->bytes = bytes;
  if (dm_layout_compute(bytes, dm_rt_arena_count(bytes), &h->layout) != 0) {
    st = DEVMALLOC_EINVAL; /* too small to hold one chunk */
    goto fail;
  }
  if (cuStreamCreate(&h->stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
    st = DEVMALLOC_ECUDA;
    h->stream = NULL;
    goto fail;
  }
  CUresult r = alloc_aligned(bytes, &h->mem, &h->base);
  if (r != CUDA_SUCCESS) {
    st = r == CUDA_ERROR_OUT_OF_MEMORY ? DEVMALLOC_ENOMEM : DEVMALLOC_ECUDA;
    h->mem = 0;
    goto fail;
  }
  uint64_t pool = h->layout.pool_bytes;
  if (cuMemsetD8Async(h->base + pool, 0, bytes - pool, h->stream) != CUDA_SUCCESS) {
    st = DEVMALLOC_ECUDA;
    goto fail;
  }
  dm_heap_build(&h->layout, h->base, bytes, &h->image);
  dm_dev_writer_t w = {h->base, h->stream, CUDA_SUCCESS};
  dm_heap_format(&h->layout, &h->image, dm_dev_write, dm_dev_fill32, &w, 1);
  if (w.err != CUDA_SUCCESS) {
    st = DEVMALLOC_ECUDA;
    goto fail;
  }
  h->desc = h->base + h->layout.heap_off;
  pop();
  *out = h;
  return DEVMALLOC_OK;
fail:
  if (h->mem) cuMemFree(h->mem);
  if (h->stream) cuStreamDestroy(h->stream);
  pop();
  free(h);
  return st;
}

/* Write one 32-bit field of the device's dm_heap_t. */
static devmalloc_status_t write_heap_u32(devmalloc_heap_t *h, size_t field, uint32_t v) {
  devmalloc_status_t st = push(h->ctx);
  if (st) return st;
  CUresult r = copy_to_device(h, h->desc + field, &v, sizeof v);
  pop();
  return r == CUDA_SUCCESS ? DEVMALLOC_OK : DEVMALLOC_ECUDA;
}

devmalloc_status_t devmalloc_heap_set_min_block(devmalloc_heap_t *h, size_t bytes) {
  if (!h || bytes > DM_SLAB_MAX) return DEVMALLOC_EINVAL;
  return write_heap_u32(h, offsetof(dm_heap_t, min_block), (uint32_t)bytes);
}

devmalloc_status_t devmalloc_heap_set_dense(devmalloc_heap_t *h, int on) {
  if (!h) return DEVMALLOC_EINVAL;
  return write_heap_u32(h, offsetof(dm_heap_t, round), on ? DM_MIN_ALIGN - 1 : DM_SECTOR_BYTES - 1);
}

devmalloc_status_t devmalloc_heap_set_check(devmalloc_heap_t *h, int on) {
  if (!h) return DEVMALLOC_EINVAL;
  return write_heap_u32(h, offsetof(dm_heap_t, check), on ? 1u : 0u);
}

static devmalloc_status_t bind_global(devmalloc_heap_t *h, CUresult found, CUdeviceptr addr, size_t size) {
  if (found == CUDA_ERROR_NOT_FOUND) return DEVMALLOC_ENOTFOUND;
  if (found != CUDA_SUCCESS || size != sizeof(CUdeviceptr)) return DEVMALLOC_ECUDA;
  return copy_to_device(h, addr, &h->desc, sizeof h->desc) == CUDA_SUCCESS ? DEVMALLOC_OK : DEVMALLOC_ECUDA;
}

/* Bind to a module (library == NULL) or a library (module == NULL). */
static devmalloc_status_t bind_owner(devmalloc_heap_t *h, CUmodule mod, CUlibrary lib) {
  if (!h || (!mod && !lib)) return DEVMALLOC_EINVAL;
  devmalloc_status_t st = push(h->ctx);
  if (st) return st;
  CUdeviceptr addr = 0;
  size_t size = 0;
  CUresult r = mod ? cuModuleGetGlobal(&addr, &size, mod, DEVMALLOC_DESC_SYMBOL)
                   : cuLibraryGetGlobal(&addr, &size, lib, DEVMALLOC_DESC_SYMBOL);
  st = bind_global(h, r, addr, size);
  pop();
  return st;
}

devmalloc_status_t devmalloc_heap_bind_module(devmalloc_heap_t *h, CUmodule mod) {
  return mod ? bind_owner(h, mod, NULL) : DEVMALLOC_EINVAL;
}

devmalloc_status_t devmalloc_heap_bind_library(devmalloc_heap_t *h, CUlibrary lib) {
  return lib ? bind_owner(h, NULL, lib) : DEVMALLOC_EINVAL;
}

/* Copy the metadata (everything after the pool) to the host and rebase a
 * dm_heap_t onto the copy. The caller frees *copy. */
static devmalloc_status_t fetch_metadata(const devmalloc_heap_t *h, void **copy, dm_heap_t *view) {
  uint64_t pool = h->layout.pool_bytes, n = h->bytes - pool;
  char *buf = malloc(n);
  if (!buf) return DEVMALLOC_ENOMEM;
  if (copy_from_device(h, buf, h->base + pool, n) != CUDA_SUCCESS) {
    free(buf);
    return DEVMALLOC_ECUDA;
  }
  dm_heap_build(&h->layout, (uint64_t)(uintptr_t)buf - pool, h->bytes, view);
  *copy = buf;
  return DEVMALLOC_OK;
}

devmalloc_status_t devmalloc_heap_stats(devmalloc_heap_t *h, devmalloc_stats_t *out) {
  if (!h || !out) return DEVMALLOC_EINVAL;
  devmalloc_status_t st = push(h->ctx);
  if (st) return st;
  dm_layout_t *L = &h->layout;
  size_t n = (size_t)(L->hstats_off + sizeof(dm_heap_stats_t) - L->astats_off);
  char *buf = malloc(n);
  if (!buf)
    st = DEVMALLOC_ENOMEM;
  else if (copy_from_device(h, buf, h->base + L->astats_off, n) != CUDA_SUCCESS)
    st = DEVMALLOC_ECUDA;
  else {
    const dm_heap_stats_t *hs = (const dm_heap_stats_t *)(buf + (L->hstats_off - L->astats_off));
    dm_heap_read_stats(&h->image, (const dm_arena_stats_t *)buf, hs, out);
    out->footprint_bytes = hs->footprint;
    out->mapped_bytes = out->heap_bytes; /* one fixed allocation */
    out->growth_events = 0;
    out->max_bytes = out->pool_bytes;
    out->mapped_peak = out->mapped_bytes;
    if (h->growth) st = h->growth_stats(h, out); /* host/heap/growth.c */
  }
  free(buf);
  pop();
  return st;
}

devmalloc_status_t devmalloc_heap_verify(devmalloc_heap_t *h, int *whole, char *why, size_t whylen) {
  if (!h) return DEVMALLOC_EINVAL;
  devmalloc_status_t st = push(h->ctx);
  if (st) return st;
  void *copy = NULL;
  dm_heap_t view;
  st = fetch_metadata(h, &copy, &view);
  if (st == DEVMALLOC_OK) {
    if (dm_heap_check(&view, why, whylen) != 0) {
      st = DEVMALLOC_EINVAL;
      if (whole) *whole = 0;
    } else if (whole) {
      *whole = dm_heap_whole(&view, why, whylen);
    }
  }
  free(copy);
  pop();
  return st;
}

devmalloc_status_t devmalloc_module_unbound_calls(CUmodule mod, uint64_t *out) {
  if (!mod || !out) return DEVMALLOC_EINVAL;
  CUdeviceptr addr;
  size_t size;
  CUresult r = cuModuleGetGlobal(&addr, &size, mod, DEVMALLOC_UNBOUND_SYMBOL);
  if (r == CUDA_ERROR_NOT_FOUND) return DEVMALLOC_ENOTFOUND;
  if (r != CUDA_SUCCESS || size != sizeof *out) return DEVMALLOC_ECUDA;
  return cuMemcpyDtoH(out, addr, sizeof *out) == CUDA_SUCCESS ? DEVMALLOC_OK : DEVMALLOC_ECUDA;
}

CUdeviceptr devmalloc_heap_device_ptr(const devmalloc_heap_t *h) { return h ? h->desc : 0; }
size_t devmalloc_heap_bytes(const devmalloc_heap_t *h) { return h ? h->bytes : 0; }
CUcontext devmalloc_heap_context(const devmalloc_heap_t *h) { return h ? h->ctx : NULL; }

devmalloc_status_t devmalloc_heap_destroy(devmalloc_heap_t *h) {
  if (!h) return DEVMALLOC_EINVAL;
  devmalloc_status_t st = DEVMALLOC_OK;
  if (h->growth) return h->growth_destroy(h); /* host/heap/growth.c */
  if (push(h->ctx) == DEVMALLOC_OK) {
    if (cuMemFree(h->mem) != CUDA_SUCCESS) st = DEVMALLOC_ECUDA;
    cuStreamDestroy(h->stream);
    pop();
  } else {
    st = DEVMALLOC_ECUDA; /* context already gone: its memory went with it */
  }
  free(h);
  return st;
}
