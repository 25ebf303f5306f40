/*
 * glue.c — wiring to the shim's other parts, each optional (weak references,
 * present when their archives are linked into the .so):
 *   - re-link (jit_link.h): resolve driver entry points through us, so the
 *     JIT link never reaches a hook;
 *   - host pool (host/pool_glue.h): give it the real driver functions, and
 *     drop a context's pool when the context goes.
 *
 * Locking: dm_glue_init runs once inside dm_driver_init's pthread_once.
 */
#include "shim.h"
#include "pool/pool_glue.h"

#pragma weak dm_pool_hooks_set_driver
#pragma weak dm_pool_hooks_forget_context
extern void dm_jit_set_resolver(void *(*fn)(const char *symbol)) __attribute__((weak));

static CUresult real_mem_get_info(size_t *f, size_t *t) {
  dm_pfn_cuMemGetInfo_v2 p = (dm_pfn_cuMemGetInfo_v2)dm_real(DM_ID_cuMemGetInfo_v2);
  return p ? p(f, t) : CUDA_ERROR_NOT_INITIALIZED;
}

static CUresult real_mem_free(CUdeviceptr d) {
  dm_pfn_cuMemFree_v2 p = (dm_pfn_cuMemFree_v2)dm_real(DM_ID_cuMemFree_v2);
  return p ? p(d) : CUDA_ERROR_NOT_INITIALIZED;
}

static CUresult ctx_get_current(CUcontext *c) { return dm_drv.cuCtxGetCurrent(c); }
static CUresult ctx_synchronize(void) { return dm_drv.cuCtxSynchronize(); }
static CUresult ctx_push(CUcontext c) { return dm_drv.cuCtxPushCurrent_v2(c); }
static CUresult ctx_pop(CUcontext *c) { return dm_drv.cuCtxPopCurrent_v2(c); }

void dm_glue_init(void) {
  if (dm_jit_set_resolver) dm_jit_set_resolver(dm_driver_sym);
  if (dm_pool_hooks_set_driver) {
    static const dm_pool_driver_t drv = {ctx_get_current, ctx_synchronize,
                                         real_mem_get_info, real_mem_free,
                                         ctx_push, ctx_pop};
    dm_pool_hooks_set_driver(&drv);
  }
}

void dm_glue_forget_ctx(CUcontext ctx) {
  if (dm_pool_hooks_forget_context) dm_pool_hooks_forget_context(ctx);
}

/* The static zstd inside the shim calls these tracing hooks if they are
 * defined (weak references). Left undefined they would be dynamic and could
 * bind to some other library's; define them here, hidden: tracing off. */
unsigned long long ZSTD_trace_decompress_begin(const void *dctx) { return 0; }
void ZSTD_trace_decompress_end(unsigned long long ctx, const void *trace) {}
