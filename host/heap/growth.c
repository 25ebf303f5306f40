/*
 * growth.c — heaps that grow, in the host runtime (include/devmalloc.h:
 * devmalloc_heap_create_growing, devmalloc_heap_trim, devmalloc_heap_grows).
 *
 * Creation: one virtual range [pool (max bytes)][metadata] reserved with
 * cuMemAddressReserve (2 MiB aligned); the metadata is mapped at once (one
 * allocation, zeroed, formatted by dm_heap_format_grow: a few memsets); the
 * pool is mapped from its start, `step` bytes per allocation
 * (cuMemCreate + cuMemMap + cuMemSetAccess), by grower.c: `initial` bytes
 * now, more when the device asks through the block it shares with the host
 * (dm_grow_host_t in cuMemHostAlloc(DEVICEMAP) memory).
 *
 * Trim: dm_grow_trim runs as a kernel of the runtime's own module
 * (host/heap/trim_kernel.cu, embedded as a fatbin, loaded in the heap's context
 * at the first trim) on the heap's stream, beside the program's kernels; it
 * sets a ceiling at the new top, then grower.c unmaps the steps above it.
 *
 * Without virtual memory management (CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_
 * MANAGEMENT_SUPPORTED = 0, or a VMM call missing) a fixed heap of
 * cfg->fallback bytes is made, with a notice.
 *
 * Locking: grower.c's mutex; the service thread sets the heap's context
 * current once and calls only the VMM functions. Every call here pushes the
 * heap's context for its duration.
 */
#include <stdlib.h>
#include <string.h>
#include "heap_priv.h"
#include "growth.h"

#define MIB (1ull << 20)
#define DEF_INITIAL (64 * MIB)
#define DEF_STEP (64 * MIB)
#define DEF_WAIT_MS 200u
#define DEF_POLL_US 50u
#define DM_GROW_RESERVE (256 * MIB)

struct dm_rt_growth {
  CUcontext ctx;
  CUdevice dev;
  CUdeviceptr va; /* reserved range: pool then metadata */
  size_t va_bytes;
  size_t meta_bytes; /* mapped at va + pool_bytes */
  CUmemGenericAllocationHandle meta;
  CUmemGenericAllocationHandle *steps; /* one per step of the pool */
  size_t nsteps;
  uint64_t step;
  dm_grow_host_t *ghost; /* host address of the shared block (a registered page) */
  int registered;
  dm_grower_t *grower;
  CUmodule trim_mod; /* the trim kernel's module, loaded at the first trim */
  CUfunction trim_fn;
};

static devmalloc_status_t push(CUcontext ctx) {
  return cuCtxPushCurrent(ctx) == CUDA_SUCCESS ? DEVMALLOC_OK : DEVMALLOC_ECUDA;
}
static void pop(void) {
  CUcontext dummy;
  cuCtxPopCurrent(&dummy);
}

static CUmemAllocationProp prop_of(CUdevice dev) {
  CUmemAllocationProp p;
  memset(&p, 0, sizeof p);
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = dev;
  return p;
}

/* Map [off, off + n) of the range at va with a new allocation; *hd gets it. */
static int map_at(struct dm_rt_growth *g, CUdeviceptr at, uint64_t n, CUmemGenericAllocationHandle *hd) {
  CUmemAllocationProp p = prop_of(g->dev);
  CUresult r = cuMemCreate(hd, n, &p, 0);
  if (r != CUDA_SUCCESS) return r == CUDA_ERROR_OUT_OF_MEMORY ? 1 : -1;
  if (cuMemMap(at, n, 0, *hd, 0) != CUDA_SUCCESS) {
    cuMemRelease(*hd);
    return -1;
  }
  CUmemAccessDesc a;
  memset(&a, 0, sizeof a);
  a.location = p.location;
  a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (cuMemSetAccess(at, n, &a, 1) != CUDA_SUCCESS) {
    cuMemUnmap(at, n);
    cuMemRelease(*hd);
    return -1;
  }
  return 0;
}

static int vmm_map(void *ctx, uint64_t off, uint64_t n) {
  struct dm_rt_growth *g = ctx;
  size_t i = off / g->step;
  if (i >= g->nsteps) return -1;
  /* "the device is full" leaves DM_GROW_RESERVE to the driver and the
   * program's own allocations (launches need memory too) */
  size_t fr = 0, tot = 0;
  if (cuMemGetInfo(&fr, &tot) == CUDA_SUCCESS && fr < n + DM_GROW_RESERVE) return 1;
  return map_at(g, g->va + off, n, &g->steps[i]);
}

static void vmm_unmap(void *ctx, uint64_t off, uint64_t n) {
  struct dm_rt_growth *g = ctx;
  size_t i = off / g->step;
  cuMemUnmap(g->va + off, n);
  if (i < g->nsteps && g->steps[i]) cuMemRelease(g->steps[i]);
  if (i < g->nsteps) g->steps[i] = 0;
}

/* The service thread works in the heap's context, in relaxed capture mode:
 * in the default (global) mode its VMM calls would fail, and invalidate the
 * capture, while an application thread captures a graph. */
static void vmm_thread_init(void *ctx) {
  struct dm_rt_growth *g = ctx;
  cuCtxSetCurrent(g->ctx);
  CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
  cuThreadExchangeStreamCaptureMode(&m);
}

static devmalloc_status_t growth_stats(devmalloc_heap_t *h, devmalloc_stats_t *out);
static devmalloc_status_t growth_destroy(devmalloc_heap_t *h);

static uint64_t round_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

/* Undo a partial creation (context pushed). */
static void teardown(devmalloc_heap_t *h) {
  struct dm_rt_growth *g = h->growth;
  if (g) {
    if (h->stream) cuStreamSynchronize(h->stream); /* a trim kernel writes the shared page */
    if (g->grower) dm_grower_stop(g->grower);      /* unmaps the pool's steps */
    if (g->trim_mod) cuModuleUnload(g->trim_mod);
    if (g->meta) {
      cuMemUnmap(g->va + h->layout.pool_bytes, g->meta_bytes);
      cuMemRelease(g->meta);
    }
    if (g->va) cuMemAddressFree(g->va, g->va_bytes);
    if (g->registered) cuMemHostUnregister(g->ghost);
    free(g->ghost);
    free(g->steps);
    free(g);
  }
  if (h->stream) cuStreamDestroy(h->stream);
  free(h);
}

static const char *k_no_vmm =
    "the device or driver has no virtual memory management: a fixed heap was made instead "
    "(docs/design.md, \"A heap that grows\")";
static const char *k_sanitizer =
    "running under compute-sanitizer, which does not see memory mapped while a kernel runs: "
    "a fixed heap was made instead (docs/design.md, \"A heap that grows\")";

/* compute-sanitizer names its tool library in the injection variables of
 * the process it runs (NVTX_INJECTION64_PATH=libsanitizer-collection.so with
 * CUDA 13.0); its memcheck reported accesses to
 * memory a heap mapped during a kernel as out of bounds, so such a process
 * gets a fixed heap. */
static int names_sanitizer(const char *var) {
  const char *v = secure_getenv(var);
  return v && strcasestr(v, "sanitizer") != NULL;
}
static int under_sanitizer(void) {
  return names_sanitizer("NVTX_INJECTION64_PATH") || names_sanitizer("CUDA_INJECTION64_PATH");
}

devmalloc_status_t devmalloc_heap_create_growing(CUcontext ctx, const devmalloc_grow_config_t *cfg_in,
                                                 devmalloc_heap_t **out, const char **notice) {
  if (notice) *notice = NULL;
  if (!out) return DEVMALLOC_EINVAL;
  *out = NULL;
  devmalloc_grow_config_t cfg;
  memset(&cfg, 0, sizeof cfg);
  if (cfg_in) cfg = *cfg_in;
  if (!ctx && (cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx)) return DEVMALLOC_EINVAL;
  if (!cfg.initial) cfg.initial = DEF_INITIAL;
  if (!cfg.step) cfg.step = DEF_STEP;
  if (!cfg.wait_ms) cfg.wait_ms = DEF_WAIT_MS;
  if (!cfg.poll_us) cfg.poll_us = DEF_POLL_US;
  devmalloc_status_t st = push(ctx);
  if (st) return st;
  CUdevice dev;
  int vmm = 0;
  if (cuCtxGetDevice(&dev) != CUDA_SUCCESS) {
    pop();
    return DEVMALLOC_ECUDA;
  }
  if (cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev) !=
      CUDA_SUCCESS)
    vmm = 0;
  size_t gran = 0;
  CUmemAllocationProp p = prop_of(dev);
  if (vmm && (cuMemGetAllocationGranularity(&gran, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS ||
              !gran || (gran & (gran - 1)) != 0 || gran > cfg.step))
    vmm = 0;
  int tool = vmm && under_sanitizer();
  if (!vmm || tool) {
    pop();
    if (notice) *notice = tool ? k_sanitizer : k_no_vmm;
    return devmalloc_heap_create(ctx, cfg.fallback ? cfg.fallback : cfg.initial, out);
  }
  uint64_t unit = gran > DM_GROW_BYTES ? gran : DM_GROW_BYTES;
  uint64_t step = round_up(cfg.step, unit);
  if (!cfg.max) {
    size_t total = 0;
    if (cuDeviceTotalMem(&total, dev) != CUDA_SUCCESS) total = 0;
    cfg.max = total;
  }
  /* the maximum is a cap (to the granule); the last step may be partial */
  uint64_t pool = round_up(cfg.max ? cfg.max : unit, unit);
  if (pool > dm_layout_max_bytes() / 2) pool = dm_layout_max_bytes() / 2 / unit * unit;
  if (step > pool) step = pool;
  uint64_t initial = round_up(cfg.initial, step);
  if (initial > pool) initial = pool;

  devmalloc_heap_t *h = calloc(1, sizeof *h);
  struct dm_rt_growth *g = calloc(1, sizeof *g);
  if (!h || !g) {
    free(h);
    free(g);
    pop();
    return DEVMALLOC_ENOMEM;
  }
  h->ctx = ctx;
  h->growth = g;
  h->growth_stats = growth_stats;
  h->growth_destroy = growth_destroy;
  g->ctx = ctx;
  g->dev = dev;
  g->step = step;
  st = DEVMALLOC_ECUDA;
  if (dm_layout_compute_grow(pool, dm_rt_arena_count(pool), &h->layout) != 0) {
    st = DEVMALLOC_EINVAL;
    goto fail;
  }
  h->bytes = h->layout.total;
  g->va_bytes = round_up(h->layout.total, unit);
  g->meta_bytes = g->va_bytes - h->layout.pool_bytes;
  g->nsteps = (size_t)((pool + step - 1) / step);
  g->steps = calloc(g->nsteps, sizeof *g->steps);
  if (!g->steps) {
    st = DEVMALLOC_ENOMEM;
    goto fail;
  }
  if (cuStreamCreate(&h->stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
    h->stream = NULL;
    goto fail;
  }
  if (cuMemAddressReserve(&g->va, g->va_bytes, unit, 0, 0) != CUDA_SUCCESS) {
    g->va = 0;
    goto fail;
  }
  int e = map_at(g, g->va + h->layout.pool_bytes, g->meta_bytes, &g->meta);
  if (e) {
    g->meta = 0;
    st = e == 1 ? DEVMALLOC_ENOMEM : DEVMALLOC_ECUDA;
    goto fail;
  }
  /* ordinary host memory, registered: it outlives the context, so the
   * service thread never reads freed memory when the context goes first */
  void *hp = NULL;
  if (posix_memalign(&hp, 4096, 4096) != 0) {
    st = DEVMALLOC_ENOMEM;
    goto fail;
  }
  memset(hp, 0, 4096);
  g->ghost = hp;
  if (cuMemHostRegister(hp, 4096, CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE) != CUDA_SUCCESS)
    goto fail;
  g->registered = 1;
  CUdeviceptr ghost_dev = 0;
  if (cuMemHostGetDevicePointer(&ghost_dev, hp, 0) != CUDA_SUCCESS) goto fail;
  h->base = g->va;
  if (cuMemsetD8Async(g->va + h->layout.pool_bytes, 0, g->meta_bytes, h->stream) != CUDA_SUCCESS) goto fail;
  dm_heap_build(&h->layout, g->va, h->bytes, &h->image);
  h->image.ghost = (dm_grow_host_t *)(uintptr_t)ghost_dev;
  h->image.grow_step = step;
  h->image.grow_watermark = cfg.watermark ? cfg.watermark : step;
  h->image.grow_wait_ns = (uint64_t)cfg.wait_ms * 1000000ull;
  dm_dev_writer_t w = {g->va, h->stream, CUDA_SUCCESS};
  dm_heap_format_grow(&h->layout, &h->image, dm_dev_write, dm_dev_fill32, &w);
  if (w.err != CUDA_SUCCESS) goto fail;
  dm_grow_cfg_t gc = {pool, initial, step, (uint64_t)cfg.poll_us * 1000ull};
  static const dm_grow_ops_t ops = {vmm_map, vmm_unmap, vmm_thread_init};
  /* the service thread needs the context current for the VMM calls */
  g->grower = dm_grower_start(g->ghost, &gc, &ops, g, &e);
  if (!g->grower) {
    st = e == 1 ? DEVMALLOC_ENOMEM : DEVMALLOC_ECUDA;
    goto fail;
  }
  h->desc = g->va + h->layout.heap_off;
  pop();
  *out = h;
  return DEVMALLOC_OK;
fail:
  teardown(h);
  pop();
  return st;
}

int devmalloc_heap_grows(const devmalloc_heap_t *h) { return h && h->growth; }

static devmalloc_status_t growth_stats(devmalloc_heap_t *h, devmalloc_stats_t *out) {
  struct dm_rt_growth *g = h->growth;
  dm_grow_t dg;
  CUresult r = cuMemcpyDtoHAsync(&dg, h->base + h->layout.grow_off, sizeof dg, h->stream);
  if (r == CUDA_SUCCESS) r = cuStreamSynchronize(h->stream);
  if (r != CUDA_SUCCESS) return DEVMALLOC_ECUDA;
  dm_grower_stats_t s;
  dm_grower_stats(g->grower, &s);
  out->mapped_bytes = s.mapped + g->meta_bytes;
  out->mapped_peak = s.peak + g->meta_bytes;
  out->growth_events = s.events;
  out->max_bytes = h->layout.pool_bytes;
  out->grow_waits = dg.waits;
  out->grow_timeouts = dg.timeouts;
  out->trims = s.trims;
  out->trimmed_bytes = s.trimmed;
  out->grows = 1;
  return DEVMALLOC_OK;
}

/* ---- trim: a kernel of the runtime's own module ------------------------ */
/* host/heap/trim_kernel.cu, compiled to a fatbin and embedded (mk/host_heap.mk) */
extern const unsigned char dm_trim_fatbin[];

/* Start dm_grow_trim on the device, on the heap's stream, beside whatever
 * else runs (context pushed); it writes the new top into the shared block,
 * where the service thread picks it up. 0: launched. */
static int launch_trim_kernel(void *arg, uint64_t floor, uint64_t unit) {
  devmalloc_heap_t *h = arg;
  struct dm_rt_growth *g = h->growth;
  if (!g->trim_fn) {
    if (!g->trim_mod && cuModuleLoadData(&g->trim_mod, dm_trim_fatbin) != CUDA_SUCCESS) {
      g->trim_mod = NULL;
      return -1;
    }
    if (cuModuleGetFunction(&g->trim_fn, g->trim_mod, "devmalloc_trim_kernel") != CUDA_SUCCESS) {
      g->trim_fn = NULL;
      return -1;
    }
  }
  CUdeviceptr heap = h->desc;
  unsigned long long fl = floor, un = unit;
  CUdeviceptr out = (CUdeviceptr)(uintptr_t)h->image.ghost + offsetof(dm_grow_host_t, trim_result);
  void *params[] = {&heap, &fl, &un, &out};
  return cuLaunchKernel(g->trim_fn, 1, 1, 1, 1, 1, 1, 0, h->stream, params, NULL) == CUDA_SUCCESS ? 0 : -1;
}

/* Trims run with the heap's context pushed and in relaxed capture mode: a
 * launch on our stream while another thread captures in global mode would
 * otherwise fail. */
typedef struct {
  CUstreamCaptureMode mode;
  int relaxed;
} trim_scope_t;

static devmalloc_status_t trim_enter(devmalloc_heap_t *h, trim_scope_t *s) {
  devmalloc_status_t st = push(h->ctx);
  if (st) return st;
  s->mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  s->relaxed = cuThreadExchangeStreamCaptureMode(&s->mode) == CUDA_SUCCESS;
  return DEVMALLOC_OK;
}

static void trim_leave(trim_scope_t *s) {
  if (s->relaxed) cuThreadExchangeStreamCaptureMode(&s->mode);
  pop();
}

devmalloc_status_t devmalloc_heap_trim(devmalloc_heap_t *h, size_t keep, size_t *unmapped) {
  if (unmapped) *unmapped = 0;
  if (!h) return DEVMALLOC_EINVAL;
  if (!h->growth) return DEVMALLOC_OK;
  trim_scope_t s;
  devmalloc_status_t st = trim_enter(h, &s);
  if (st) return st;
  int err = 0;
  uint64_t freed = dm_grower_trim(h->growth->grower, keep, launch_trim_kernel, h, &err);
  trim_leave(&s);
  if (unmapped) *unmapped = (size_t)freed;
  return err ? DEVMALLOC_ECUDA : DEVMALLOC_OK;
}

devmalloc_status_t devmalloc_heap_trim_start(devmalloc_heap_t *h, size_t keep) {
  if (!h) return DEVMALLOC_EINVAL;
  if (!h->growth) return DEVMALLOC_OK;
  trim_scope_t s;
  devmalloc_status_t st = trim_enter(h, &s);
  if (st) return st;
  int r = dm_grower_trim_start(h->growth->grower, keep, launch_trim_kernel, h);
  trim_leave(&s);
  return r < 0 ? DEVMALLOC_ECUDA : DEVMALLOC_OK;
}

static devmalloc_status_t growth_destroy(devmalloc_heap_t *h) {
  if (push(h->ctx) != DEVMALLOC_OK) {
    devmalloc_heap_abandon(h);
    return DEVMALLOC_ECUDA;
  }
  teardown(h);
  pop();
  return DEVMALLOC_OK;
}

void devmalloc_heap_abandon(devmalloc_heap_t *h) {
  if (!h) return;
  struct dm_rt_growth *g = h->growth;
  if (g) {
    /* no driver call: the context and everything in it are gone; stop the
     * thread (whose unmaps now fail harmlessly) and free host memory */
    if (g->grower) dm_grower_stop(g->grower);
    free(g->ghost);
    free(g->steps);
    free(g);
  }
  free(h);
}
