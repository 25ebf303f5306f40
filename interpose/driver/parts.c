/*
 * parts.c — the only file that names the APIs of the shim's other parts: the
 * host runtime (include/devmalloc.h), the load-time re-link (relink/relink.h)
 * and the host pool (pool/pool_hooks.h, pool_glue.h). The rest of the shim
 * calls them through dm_heap_ops, dm_relink_ops and dm_pool_ops, so host
 * tests link fakes of these tables instead of this file (tests/unit/shim_fake.h).
 *
 * dm_parts_connect gives each part what it needs from the shim, once, when
 * the driver is found: the host runtime its forwarders to the real driver
 * (generated forwarders.c, see mk/interpose_driver.mk), the re-link a resolver of
 * real entry points (so the JIT link never reaches a hook) and the NVTX
 * markers for its cache events, the pool the real driver functions, the
 * shim's options and its log. The resolvers of real entry points come as
 * arguments from real.c (the driver's first use), which sits above this file.
 *
 * May call: the other parts' APIs (above), driver.c, real_dlsym.c, observe/,
 * options/. Called by: real.c (dm_parts_connect); the tables are read by
 * every file that reaches another part.
 *
 * Locking: the tables are const; dm_parts_connect runs once inside real.c's
 * first-use pthread_once, before the pool is given the functions that read
 * g_real.
 */
#include "shim.h"
#include "obs.h"
#include "pool/pool_glue.h"
#include "relink/jit_link.h"
#include "relink/relink.h"

static const dm_heap_ops_t g_heap_ops = {
    devmalloc_heap_create,    devmalloc_heap_bind_module,    devmalloc_heap_bind_library,
    devmalloc_heap_stats,     devmalloc_heap_destroy,        devmalloc_status_string,
    devmalloc_stats_print,    devmalloc_heap_set_min_block,  devmalloc_heap_set_check,
    devmalloc_heap_set_dense, devmalloc_heap_create_growing, devmalloc_heap_trim_start,
    devmalloc_heap_grows,     devmalloc_heap_abandon,
};
const dm_heap_ops_t *dm_heap_ops = &g_heap_ops;

static const dm_relink_ops_t g_relink_ops = {dm_relink_sized, dm_relink_file, dm_relink_free,
                                             dm_relink_read_ahead};
const dm_relink_ops_t *dm_relink_ops = &g_relink_ops;

static const dm_pool_ops_t g_pool_ops = {
    dm_pool_hooks_enabled, dm_pool_mem_alloc,   dm_pool_mem_alloc_pitch,      dm_pool_mem_free,
    dm_pool_mem_get_info,  dm_pool_print_stats, dm_pool_hooks_forget_context,
};
const dm_pool_ops_t *dm_pool_ops = &g_pool_ops;

/* ---- what the pool needs from the driver, the options and the log ------- */
static void *(*g_real)(dm_hook_id_t); /* real.c's dm_real, from dm_parts_connect */

static CUresult real_mem_get_info(size_t *f, size_t *t) {
  dm_pfn_cuMemGetInfo_v2 p = (dm_pfn_cuMemGetInfo_v2)g_real(DM_ID_cuMemGetInfo_v2);
  return p ? p(f, t) : CUDA_ERROR_NOT_INITIALIZED;
}

static CUresult real_mem_free(CUdeviceptr d) {
  dm_pfn_cuMemFree_v2 p = (dm_pfn_cuMemFree_v2)g_real(DM_ID_cuMemFree_v2);
  return p ? p(d) : CUDA_ERROR_NOT_INITIALIZED;
}

static CUresult ctx_get_current(CUcontext *c) { return dm_drv.cuCtxGetCurrent(c); }
static CUresult ctx_synchronize(void) { return dm_drv.cuCtxSynchronize(); }
static CUresult ctx_push(CUcontext c) { return dm_drv.cuCtxPushCurrent_v2(c); }
static CUresult ctx_pop(CUcontext *c) { return dm_drv.cuCtxPopCurrent_v2(c); }

static void pool_log(const char *line) { dm_log(DM_LOG_WARN, "%s", line); }

static void connect_pool(void) {
  static const dm_pool_driver_t drv = {ctx_get_current, ctx_synchronize, real_mem_get_info,
                                       real_mem_free,   ctx_push,        ctx_pop};
  const dm_options_t *o = dm_options();
  dm_pool_settings_t s = {
      .mode = o->host_pool.mode == DM_OPT_POOL_AUTO    ? DM_POOL_MODE_AUTO
              : o->host_pool.mode == DM_OPT_POOL_BYTES ? DM_POOL_MODE_BYTES
                                                       : DM_POOL_MODE_OFF,
      .bytes = (size_t)o->host_pool.bytes,
      .sync_free = o->host_pool_sync ? 1 : 0,
      .log = pool_log,
  };
  dm_pool_hooks_settings(&s);
  dm_pool_hooks_set_driver(&drv);
}

/* Generated with the shim (forwarders.c): the host runtime's driver calls. */
void dm_fwd_resolve(void *(*lookup)(void *, const char *), void *handle);

void dm_parts_connect(void *libcuda, void *(*sym)(const char *), void *(*real)(dm_hook_id_t)) {
  g_real = real;
  dm_fwd_resolve(dm_real_dlsym, libcuda);
  dm_jit_set_resolver(sym);
  dm_relink_set_events(dm_obs_event);
  connect_pool();
}

/* The static zstd inside the shim calls these tracing hooks if they are
 * defined (weak references in zstd). Left undefined they would be dynamic and
 * could bind to some other library's; define them here, hidden: tracing off. */
unsigned long long ZSTD_trace_decompress_begin(const void *dctx) { return 0; }
void ZSTD_trace_decompress_end(unsigned long long ctx, const void *trace) {}
