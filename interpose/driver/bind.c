/*
 * bind.c — the launch path: before a kernel of a module that holds devmalloc
 * runs in a context, that context's heap exists and the module's descriptor
 * points to it.
 *
 *   fast path  no image in the process may hold devmalloc -> return (one
 *              atomic load); else (handle, context) found in the launch
 *              cache -> return (one shared-lock hash lookup).
 *   slow path  (first launch of a kernel in a context) find the owner:
 *              cuKernelGetLibrary (CUkernel from cuLibrary*), else
 *              cuFuncGetModule (CUfunction); probe the descriptor if the
 *              load-time scan could not tell; create the context's heap if
 *              needed; bind; remember the verdict.
 *
 * Stream capture: a launch into a capturing stream is not bound then (its
 * kernel only runs once the graph is instantiated and launched): the
 * instantiation hook binds it (graphs.c), outside the capture. The slow path
 * also switches the thread's capture mode to relaxed
 * (cuThreadExchangeStreamCaptureMode) and pushes the target context, so heap
 * creation stays legal while another thread captures in global mode (see
 * docs/shim.md for what the host runtime must then avoid).
 *
 * May call: ctxtab.c, owners.c, driver.c, state.c, the parts' tables
 * (dm_heap_ops), options/. Called by: the hook handlers, graphs.c.
 *
 * Locking: slow paths hold the owner lock (owners.c) for their whole length,
 * so at most one thread binds at a time; heap creation takes the context
 * table lock inside it (order: owner lock, context lock, cache lock).
 */
#include "shim.h"

typedef struct {
  int pushed, relaxed;
  CUstreamCaptureMode mode;
} dm_scope_t;

static void scope_enter(dm_scope_t *s, CUcontext ctx) {
  CUcontext cur = NULL;
  s->pushed = s->relaxed = 0;
  dm_tls_busy++;
  if (dm_drv.cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur != ctx &&
      dm_drv.cuCtxPushCurrent_v2(ctx) == CUDA_SUCCESS)
    s->pushed = 1;
  s->mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  if (dm_drv.cuThreadExchangeStreamCaptureMode(&s->mode) == CUDA_SUCCESS) s->relaxed = 1;
}

static void scope_leave(dm_scope_t *s) {
  if (s->relaxed) dm_drv.cuThreadExchangeStreamCaptureMode(&s->mode);
  if (s->pushed) {
    CUcontext prev;
    dm_drv.cuCtxPopCurrent_v2(&prev);
  }
  dm_tls_busy--;
}

static const char *kind_name(dm_owner_kind_t k) { return k == DM_OWNER_LIBRARY ? "library" : "module"; }

/* Does the owner hold the descriptor? Asked of the loaded module in ctx. */
static dm_has_t probe(dm_owner_kind_t kind, const void *handle) {
  CUdeviceptr p = 0;
  size_t sz = 0;
  CUresult r = kind == DM_OWNER_LIBRARY
                   ? dm_drv.cuLibraryGetGlobal(&p, &sz, (CUlibrary)handle, DEVMALLOC_DESC_SYMBOL)
                   : dm_drv.cuModuleGetGlobal_v2(&p, &sz, (CUmodule)handle, DEVMALLOC_DESC_SYMBOL);
  if (r == CUDA_SUCCESS) return DM_HAS_YES;
  if (r == CUDA_ERROR_NOT_FOUND) return DM_HAS_NO;
  dm_log(DM_LOG_DEBUG, "%s %p: descriptor probe failed: %s", kind_name(kind), handle, dm_cu_err(r));
  return DM_HAS_UNKNOWN;
}

/* Owner lock held, scope entered. */
static dm_verdict_t ensure(dm_owner_kind_t kind, const void *handle, CUcontext ctx) {
  dm_owner_t *o = dm_owner_get(kind, handle, 1);
  if (!o) return DM_VERDICT_NONE;
  if (dm_owner_has(o) == DM_HAS_UNKNOWN) {
    dm_has_t h = probe(kind, handle);
    dm_owner_set_has(o, h);
    if (h == DM_HAS_NO)
      dm_log(DM_LOG_INFO, "%s %p (%s): not bound: no %s symbol, it uses the stock heap", kind_name(kind),
             handle, dm_owner_name(o), DEVMALLOC_DESC_SYMBOL);
  }
  if (dm_owner_has(o) != DM_HAS_YES) return DM_VERDICT_NONE;
  if (dm_owner_bound_in(o, ctx)) return DM_VERDICT_BOUND;
  devmalloc_heap_t *heap = dm_ctx_heap(ctx);
  if (!heap) return DM_VERDICT_NONE;
  double t0 = dm_clock_ms();
  devmalloc_status_t st = kind == DM_OWNER_LIBRARY ? dm_heap_ops->bind_library(heap, (CUlibrary)handle)
                                                   : dm_heap_ops->bind_module(heap, (CUmodule)handle);
  if (st == DEVMALLOC_OK) {
    dm_owner_set_bound(o, ctx);
    dm_ctx_heap_bound(ctx);
    dm_log(DM_LOG_INFO, "%s %p (%s): bound to the heap of context %p (%.2f ms)", kind_name(kind), handle,
           dm_owner_name(o), (void *)ctx, dm_clock_ms() - t0);
    return DM_VERDICT_BOUND;
  }
  if (st == DEVMALLOC_ENOTFOUND) {
    dm_owner_set_has(o, DM_HAS_NO);
    return DM_VERDICT_NONE;
  }
  dm_log(DM_LOG_WARN, "warning: %s %p (%s): binding failed: %s; its device malloc returns NULL",
         kind_name(kind), handle, dm_owner_name(o), dm_heap_ops->status_string(st));
  return DM_VERDICT_NONE;
}

/* Create ctx's heap now (the application stated its size): the first
 * kernel then finds it made. */
void dm_prepare_heap(CUcontext ctx) {
  if (!ctx) return;
  dm_scope_t s;
  scope_enter(&s, ctx);
  (void)dm_ctx_heap(ctx);
  scope_leave(&s);
}

void dm_prepare_owner(dm_owner_kind_t kind, const void *handle, CUcontext ctx) {
  if (!handle || !ctx) return;
  dm_scope_t s;
  scope_enter(&s, ctx);
  dm_owner_lock();
  (void)ensure(kind, handle, ctx);
  dm_owner_unlock();
  scope_leave(&s);
}

static void slow_path(const void *f, CUcontext ctx) {
  dm_scope_t s;
  scope_enter(&s, ctx);
  CUlibrary lib = NULL;
  CUmodule mod = NULL;
  dm_owner_kind_t kind = 0;
  const void *handle = NULL;
  if (dm_drv.cuKernelGetLibrary(&lib, (CUkernel)f) == CUDA_SUCCESS && lib) {
    kind = DM_OWNER_LIBRARY;
    handle = lib;
  } else if (dm_drv.cuFuncGetModule(&mod, (CUfunction)f) == CUDA_SUCCESS && mod) {
    kind = DM_OWNER_MODULE;
    handle = mod;
  }
  dm_verdict_t v = DM_VERDICT_NONE;
  if (handle) {
    dm_owner_lock();
    v = ensure(kind, handle, ctx);
    dm_owner_unlock();
  } else {
    dm_log(DM_LOG_DEBUG, "kernel %p: owner unknown; launched unchanged", f);
  }
  dm_lcache_put(f, ctx, v, handle);
  scope_leave(&s);
}

void dm_prepare_in_ctx(const void *f, CUcontext ctx) {
  dm_verdict_t v;
  if (!f || !ctx || dm_lcache_get(f, ctx, &v)) return;
  slow_path(f, ctx);
}

/* A launch into a capturing stream does not run now: binding waits for the
 * graph's instantiation (graphs.c), which happens outside the capture, so
 * no synchronous driver call is ever made while the stream captures. */
static int capturing(CUstream s) {
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  if (!s || s == CU_STREAM_LEGACY) return 0; /* the legacy stream is never captured */
  return dm_drv.cuStreamIsCapturing(s, &st) == CUDA_SUCCESS && st != CU_STREAM_CAPTURE_STATUS_NONE;
}

void dm_prepare_launch(CUfunction f, CUstream hStream) {
  if (!dm_candidates()) return;
  CUcontext ctx = dm_stream_ctx(hStream);
  dm_verdict_t v;
  if (!f || !ctx || dm_lcache_get(f, ctx, &v)) return;
  if (capturing(hStream)) {
    dm_log(DM_LOG_DEBUG, "kernel %p launched into a capturing stream: bound at instantiation", (void *)f);
    return;
  }
  slow_path(f, ctx);
}
