/*
 * pool_hooks.c — between the shim's cuMemAlloc/cuMemFree/cuMemGetInfo
 * hooks (contract: pool_hooks.h; extras: pool_glue.h) and the MAM pool core
 * (pool.h).
 *
 * One pool per CUDA context, created lazily at the context's first pooled
 * allocation; the context is the calling thread's current one, read with the
 * driver's real cuCtxGetCurrent (dlsym on libcuda.so.1, or the table given
 * to dm_pool_hooks_set_driver). A pool's chunks come from the real_alloc the
 * hook passes in (held in a thread-local while the pool runs, so the chunk
 * callback uses the caller's entry point) and go back through the real
 * cuMemFree.
 *
 * Semantics kept from the driver:
 * - size 0, no current context: passed to real_alloc unchanged;
 * - pool out of memory (after growth and trimming): real_alloc serves it;
 * - pointers in no pool: real_free; if it answers CUDA_ERROR_INVALID_VALUE,
 *   a line on stderr and a counter (foreign free);
 * - double or interior frees of pool memory: reported by the pool, counted,
 *   CUDA_ERROR_INVALID_VALUE returned, pool unchanged;
 * - cuMemFree synchronizes the block's own context (made current for the
 *   call when another is) before the memory can be reused
 *   (DEVMALLOC_HOST_POOL_SYNC=1, default), so kernels still reading a block
 *   freed from the host never see it handed out again;
 * - cuMemGetInfo: free = driver's free + the current context's pool free
 *   bytes (capped at total), i.e. what the application would see without
 *   the pool, up to the driver's own rounding.
 *
 * Locking: `g.lock` guards the list of context pools, their reference
 * counts and the driver table; it is taken before a pool's own mutex, never
 * after. Every use of a context's pool holds a reference (get_pool/put_pool)
 * taken under `g.lock`; the list holds one more. Forgetting a context unlinks
 * its pool and drops the list's reference: the last user frees the pool, so
 * a context destroyed while other threads allocate or free never frees a
 * pool (or its mutex) under them. Pool callbacks run
 * with the pool mutex held and set the thread-local `tl_in_pool`, so a
 * driver call that re-enters these hooks from a callback (a shim whose dlsym
 * answers with its hooks) goes straight to the real entry point.
 *
 * Options, read once: the settings the shim gives (dm_pool_hooks_settings,
 * from its options table: host_pool, host_pool_sync) before the first hook;
 * without them (host tests, bench/pool_bench) from the environment through
 * option_value() and dm_pool_parse_option():
 *   DEVMALLOC_HOST_POOL=<bytes>|auto|off  (default off)
 *   DEVMALLOC_HOST_POOL_SYNC=0|1          (default 1)
 */
#include "pool_hooks.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"
#include "pool_config.h"
#include "pool_glue.h"

#define PITCH_ALIGN 512u /* what cuMemAllocPitch gives on sm_80/sm_90 */

typedef struct ctx_pool {
  CUcontext ctx;
  dm_pool_t *pool;
  _Atomic int dead; /* context destroyed: chunk_free must not touch the driver */
  int refs;         /* under g.lock: the list's reference, plus one per user */
  char name[40];
  struct ctx_pool *next;
} ctx_pool_t;

static struct {
  pthread_mutex_t lock;
  ctx_pool_t *pools;
  dm_pool_driver_t drv;
  int drv_looked_up;
  _Atomic int mode; /* dm_pool_mode_t */
  _Atomic size_t bytes;
  _Atomic int sync_free;
  _Atomic int create_warned;
  dm_pool_settings_t settings; /* given by the shim (settings.given) */
  _Atomic(dm_real_mem_free_fn) seen_free;
  _Atomic(dm_real_mem_get_info_fn) seen_get_info;
#define DM_POOL_HOOK_ATOMIC(name, doc) _Atomic uint64_t name;
  DM_POOL_HOOK_COUNTERS(DM_POOL_HOOK_ATOMIC)
#undef DM_POOL_HOOK_ATOMIC
} g = {.lock = PTHREAD_MUTEX_INITIALIZER};

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static _Thread_local dm_real_mem_alloc_fn tl_alloc;
static _Thread_local int tl_in_pool;

#define COUNT(name) atomic_fetch_add_explicit(&g.name, 1, memory_order_relaxed)

/* ---- options ----------------------------------------------------------- */

/* Where options are read when the shim gives no settings. */
static const char *option_value(const char *name) { return secure_getenv(name); }

/* Messages go to the shim's log when it gives one, else to stderr (the
 * pool's own tests and benchmark). */
__attribute__((format(printf, 1, 2))) static void warn(const char *fmt, ...) {
  char line[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (g.settings.log)
    g.settings.log(line);
  else
    fprintf(stderr, "devmalloc: %s\n", line);
}

static int apply_config(const char *value, int sync_free) {
  dm_pool_mode_t mode = DM_POOL_MODE_OFF;
  size_t bytes = 0;
  if (dm_pool_parse_option(value, &mode, &bytes) != DM_POOL_OK) return DM_POOL_EINVAL;
  atomic_store(&g.bytes, bytes);
  atomic_store(&g.sync_free, sync_free);
  atomic_store(&g.mode, (int)mode);
  return DM_POOL_OK;
}

/* fork(): the list lock, then every pool's lock (the one order), taken
 * before and released after, in parent and child alike. */
static void fork_prepare(void) {
  pthread_mutex_lock(&g.lock);
  for (ctx_pool_t *cp = g.pools; cp; cp = cp->next) dm_pool_fork_lock(cp->pool, 1);
}

static void fork_parent(void) {
  for (ctx_pool_t *cp = g.pools; cp; cp = cp->next) dm_pool_fork_lock(cp->pool, 0);
  pthread_mutex_unlock(&g.lock);
}

/* The child's one thread has a new id: the locks are initialized afresh. */
static void fork_child(void) {
  for (ctx_pool_t *cp = g.pools; cp; cp = cp->next) dm_pool_fork_lock(cp->pool, -1);
  pthread_mutex_init(&g.lock, NULL);
}

static void init_once(void) {
  pthread_atfork(fork_prepare, fork_parent, fork_child);
  if (g.settings.given) {
    const dm_pool_settings_t *s = &g.settings;
    int mode = s->mode;
    if (mode == DM_POOL_MODE_BYTES && s->bytes == 0) mode = DM_POOL_MODE_OFF;
    atomic_store(&g.bytes, s->bytes);
    atomic_store(&g.sync_free, s->sync_free ? 1 : 0);
    atomic_store(&g.mode, mode);
    return;
  }
  const char *v = option_value("DEVMALLOC_HOST_POOL");
  const char *s = option_value("DEVMALLOC_HOST_POOL_SYNC");
  int sync = !(s && (s[0] == '0' || !strcmp(s, "off") || !strcmp(s, "no")));
  if (apply_config(v, sync) != DM_POOL_OK)
    warn("DEVMALLOC_HOST_POOL=\"%s\" is not <bytes>|auto|off; host pool off", v);
}

int dm_pool_hooks_enabled(void) {
  pthread_once(&g_once, init_once);
  return atomic_load_explicit(&g.mode, memory_order_relaxed) != DM_POOL_MODE_OFF;
}

int dm_pool_hooks_configure(const char *value, int sync_free) {
  pthread_once(&g_once, init_once);
  return apply_config(value, sync_free);
}

void dm_pool_hooks_settings(const dm_pool_settings_t *s) {
  g.settings = *s;
  g.settings.given = 1;
}

/* ---- driver table ------------------------------------------------------ */

void dm_pool_hooks_set_driver(const dm_pool_driver_t *drv) {
  pthread_mutex_lock(&g.lock);
  g.drv = drv ? *drv : (dm_pool_driver_t){0};
  g.drv_looked_up = 0;
  pthread_mutex_unlock(&g.lock);
}

/* Fill the table's NULL members from libcuda. Call with g.lock held. */
static void lookup_driver_locked(void) {
  if (g.drv_looked_up) return;
  g.drv_looked_up = 1;
  if (g.drv.ctx_get_current && g.drv.ctx_synchronize && g.drv.mem_get_info && g.drv.mem_free &&
      g.drv.ctx_push_current && g.drv.ctx_pop_current)
    return;
  void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!h) h = dlopen("libcuda.so.1", RTLD_LAZY);
  if (!h) return;
  if (!g.drv.ctx_get_current) *(void **)&g.drv.ctx_get_current = dlsym(h, "cuCtxGetCurrent");
  if (!g.drv.ctx_synchronize) *(void **)&g.drv.ctx_synchronize = dlsym(h, "cuCtxSynchronize");
  if (!g.drv.mem_get_info) *(void **)&g.drv.mem_get_info = dlsym(h, "cuMemGetInfo_v2");
  if (!g.drv.mem_free) *(void **)&g.drv.mem_free = dlsym(h, "cuMemFree_v2");
  if (!g.drv.ctx_push_current) *(void **)&g.drv.ctx_push_current = dlsym(h, "cuCtxPushCurrent_v2");
  if (!g.drv.ctx_pop_current) *(void **)&g.drv.ctx_pop_current = dlsym(h, "cuCtxPopCurrent_v2");
}

static dm_pool_driver_t driver(void) {
  pthread_mutex_lock(&g.lock);
  lookup_driver_locked();
  dm_pool_driver_t d = g.drv;
  pthread_mutex_unlock(&g.lock);
  return d;
}

static CUcontext current_ctx(const dm_pool_driver_t *d) {
  CUcontext c = NULL;
  if (!d->ctx_get_current || d->ctx_get_current(&c) != CUDA_SUCCESS) return NULL;
  return c;
}

/* Synchronize `ctx` (the freed block's context), making it current for the
 * call when another one is. */
static CUresult sync_context(const dm_pool_driver_t *d, CUcontext ctx) {
  if (!d->ctx_synchronize) return CUDA_SUCCESS;
  if (current_ctx(d) == ctx) return d->ctx_synchronize();
  CUcontext popped;
  if (!d->ctx_push_current || !d->ctx_pop_current) return CUDA_ERROR_NOT_SUPPORTED;
  CUresult r = d->ctx_push_current(ctx);
  if (r != CUDA_SUCCESS) return r;
  r = d->ctx_synchronize();
  d->ctx_pop_current(&popped);
  return r;
}

/* ---- chunk source (called with the pool mutex held) -------------------- */

static int src_chunk_alloc(void *ctx, size_t bytes, uint64_t *base) {
  (void)ctx;
  CUdeviceptr p = 0;
  if (!tl_alloc || tl_alloc(&p, bytes) != CUDA_SUCCESS) return 1;
  *base = (uint64_t)p;
  return 0;
}

static void src_chunk_free(void *ctx, uint64_t base, size_t bytes) {
  (void)bytes;
  ctx_pool_t *cp = ctx;
  if (cp->dead) return;
  dm_real_mem_free_fn f = atomic_load(&g.seen_free);
  if (!f) f = g.drv.mem_free; /* table filled before any pool exists */
  if (f) f((CUdeviceptr)base);
}

static size_t src_avail(void *ctx) {
  (void)ctx;
  dm_real_mem_get_info_fn f = atomic_load(&g.seen_get_info);
  if (!f) f = g.drv.mem_get_info;
  size_t fr = 0, tot = 0;
  if (!f || f(&fr, &tot) != CUDA_SUCCESS) return 0;
  return fr;
}

/* ---- context pools ----------------------------------------------------- */

static ctx_pool_t *find_locked(CUcontext ctx) {
  for (ctx_pool_t *cp = g.pools; cp; cp = cp->next)
    if (cp->ctx == ctx) return cp;
  return NULL;
}

/* Free a pool no one refers to any more; chunks go back to the driver unless
 * its context is gone. */
static void destroy_pool(ctx_pool_t *cp) {
  tl_in_pool = 1;
  dm_pool_destroy(cp->pool);
  tl_in_pool = 0;
  free(cp);
}

/* Drop one reference (taken by get_pool or find_holding); the last one frees. */
static void put_pool(ctx_pool_t *cp) {
  if (!cp) return;
  pthread_mutex_lock(&g.lock);
  int last = --cp->refs == 0;
  pthread_mutex_unlock(&g.lock);
  if (last) destroy_pool(cp);
}

static ctx_pool_t *new_pool_locked(CUcontext ctx) {
  ctx_pool_t *cp = calloc(1, sizeof *cp);
  if (!cp) return NULL;
  snprintf(cp->name, sizeof cp->name, "context %p", (void *)ctx);
  dm_pool_config_t cfg = {.initial_bytes =
                              atomic_load(&g.mode) == DM_POOL_MODE_BYTES ? atomic_load(&g.bytes) : 0,
                          .name = cp->name};
  dm_pool_source_t src = {
      .ctx = cp, .chunk_alloc = src_chunk_alloc, .chunk_free = src_chunk_free, .avail = src_avail};
  cp->ctx = ctx;
  cp->refs = 1;
  if (dm_pool_create(&cfg, &src, &cp->pool) != DM_POOL_OK) {
    if (!atomic_exchange(&g.create_warned, 1))
      warn("pool: a pool of %zu bytes cannot be made (the size rounds past the address "
           "space); cuMemAlloc goes to the driver",
           (size_t)cfg.initial_bytes);
    free(cp);
    return NULL;
  }
  cp->next = g.pools;
  g.pools = cp;
  COUNT(pools_created);
  return cp;
}

/* The context's pool with a reference the caller drops with put_pool(). */
static ctx_pool_t *get_pool(CUcontext ctx, int create) {
  pthread_mutex_lock(&g.lock);
  ctx_pool_t *cp = find_locked(ctx);
  if (!cp && create) cp = new_pool_locked(ctx);
  if (cp) cp->refs++;
  pthread_mutex_unlock(&g.lock);
  return cp;
}

/* Unlink pools (one context's, or all with ctx == NULL) and drop the list's
 * reference; a pool still in use is freed by its last user. */
static void unlink_pools(CUcontext ctx, int all, int dead) {
  ctx_pool_t *gone = NULL;
  pthread_mutex_lock(&g.lock);
  lookup_driver_locked();
  ctx_pool_t **link = &g.pools;
  while (*link) {
    ctx_pool_t *cp = *link;
    if (!all && cp->ctx != ctx) {
      link = &cp->next;
      continue;
    }
    *link = cp->next;
    if (dead) atomic_store(&cp->dead, 1);
    if (--cp->refs == 0) {
      cp->next = gone;
      gone = cp;
    }
  }
  pthread_mutex_unlock(&g.lock);
  while (gone) {
    ctx_pool_t *next = gone->next;
    destroy_pool(gone);
    gone = next;
  }
}

void dm_pool_hooks_forget_context(CUcontext ctx) { unlink_pools(ctx, 0, 1); }

void dm_pool_hooks_shutdown(void) { unlink_pools(NULL, 1, 0); }

/* ---- hooks ------------------------------------------------------------- */

CUresult dm_pool_mem_alloc(CUdeviceptr *dptr, size_t bytes, dm_real_mem_alloc_fn real_alloc) {
  if (!dm_pool_hooks_enabled() || tl_in_pool) return real_alloc(dptr, bytes);
  if (!dptr || bytes == 0) {
    COUNT(passthrough_allocs);
    return real_alloc(dptr, bytes);
  }
  dm_pool_driver_t d = driver();
  CUcontext ctx = current_ctx(&d);
  ctx_pool_t *cp = ctx ? get_pool(ctx, 1) : NULL;
  if (!cp) {
    COUNT(passthrough_allocs);
    return real_alloc(dptr, bytes);
  }
  uint64_t addr = 0;
  tl_alloc = real_alloc;
  tl_in_pool = 1;
  int rc = dm_pool_alloc(cp->pool, bytes, &addr);
  tl_in_pool = 0;
  tl_alloc = NULL;
  put_pool(cp);
  if (rc == DM_POOL_OK) {
    *dptr = (CUdeviceptr)addr;
    return CUDA_SUCCESS;
  }
  COUNT(fallback_allocs);
  return real_alloc(dptr, bytes);
}

CUresult dm_pool_mem_alloc_pitch(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height,
                                 unsigned int elem, dm_real_mem_alloc_fn real_alloc) {
  if (!dptr || !pitch || width == 0 || height == 0 || (elem != 4 && elem != 8 && elem != 16))
    return CUDA_ERROR_INVALID_VALUE;
  size_t p = (width + PITCH_ALIGN - 1) / PITCH_ALIGN * PITCH_ALIGN;
  if (p < width || height > SIZE_MAX / p) return CUDA_ERROR_INVALID_VALUE;
  CUresult r = dm_pool_mem_alloc(dptr, p * height, real_alloc);
  if (r == CUDA_SUCCESS) *pitch = p;
  return r;
}

CUresult dm_pool_mem_free(CUdeviceptr dptr, dm_real_mem_free_fn real_free) {
  if (real_free) atomic_store(&g.seen_free, real_free);
  if (!dm_pool_hooks_enabled() || tl_in_pool || dptr == 0) return real_free(dptr);
  /* Find the pool holding dptr: any context's (UVA addresses are unique). */
  pthread_mutex_lock(&g.lock);
  lookup_driver_locked();
  dm_pool_driver_t d = g.drv;
  ctx_pool_t *cp = g.pools;
  while (cp && !dm_pool_contains(cp->pool, (uint64_t)dptr)) cp = cp->next;
  if (cp) cp->refs++;
  pthread_mutex_unlock(&g.lock);
  if (!cp) {
    COUNT(passthrough_frees);
    CUresult r = real_free(dptr);
    if (r == CUDA_ERROR_INVALID_VALUE) {
      COUNT(foreign_frees);
      warn("pool: cuMemFree(0x%llx): not from the pool and the driver rejects it (foreign "
           "or already freed pointer)",
           (unsigned long long)dptr);
    }
    return r;
  }
  CUresult sync_rc = CUDA_SUCCESS;
  if (atomic_load_explicit(&g.sync_free, memory_order_relaxed) && !atomic_load(&cp->dead)) {
    COUNT(free_syncs);
    sync_rc = sync_context(&d, cp->ctx);
  }
  int rc = dm_pool_free(cp->pool, (uint64_t)dptr, NULL);
  put_pool(cp);
  if (rc == DM_POOL_OK) return sync_rc;
  if (rc == DM_POOL_ENOTOURS) { /* its chunk was trimmed meanwhile */
    COUNT(passthrough_frees);
    return real_free(dptr);
  }
  COUNT(pool_rejected_frees);
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult dm_pool_mem_get_info(size_t *free_b, size_t *total_b, dm_real_mem_get_info_fn real_get_info) {
  if (real_get_info) atomic_store(&g.seen_get_info, real_get_info);
  CUresult r = real_get_info(free_b, total_b);
  if (r != CUDA_SUCCESS || !dm_pool_hooks_enabled() || tl_in_pool || !free_b) return r;
  dm_pool_driver_t d = driver();
  CUcontext ctx = current_ctx(&d);
  ctx_pool_t *cp = ctx ? get_pool(ctx, 0) : NULL;
  if (cp) {
    size_t f = *free_b + dm_pool_free_bytes(cp->pool);
    if (total_b && f > *total_b) f = *total_b;
    *free_b = f;
    put_pool(cp);
  }
  return r;
}

/* ---- statistics -------------------------------------------------------- */

void dm_pool_hooks_get_stats(dm_pool_hook_stats_t *out) {
#define DM_POOL_HOOK_LOAD(name, doc) out->name = atomic_load(&g.name);
  DM_POOL_HOOK_COUNTERS(DM_POOL_HOOK_LOAD)
#undef DM_POOL_HOOK_LOAD
}

int dm_pool_hooks_ctx_stats(CUcontext ctx, dm_pool_stats_t *out) {
  ctx_pool_t *cp = get_pool(ctx, 0);
  if (!cp) return DM_POOL_ENOTOURS;
  dm_pool_get_stats(cp->pool, out);
  put_pool(cp);
  return DM_POOL_OK;
}

void dm_pool_print_stats(void *file) {
  FILE *f = file ? file : stderr;
  pthread_mutex_lock(&g.lock);
  for (ctx_pool_t *cp = g.pools; cp; cp = cp->next) {
    dm_pool_stats_t s;
    char title[80];
    dm_pool_get_stats(cp->pool, &s);
    snprintf(title, sizeof title, "devmalloc host pool, %s", cp->name);
    dm_pool_stats_print(&s, f, title);
  }
  pthread_mutex_unlock(&g.lock);
  dm_pool_hook_stats_t h;
  dm_pool_hooks_get_stats(&h);
  fprintf(f, "devmalloc host pool hooks (mode %s):\n",
          atomic_load(&g.mode) == DM_POOL_MODE_OFF    ? "off"
          : atomic_load(&g.mode) == DM_POOL_MODE_AUTO ? "auto"
                                                      : "bytes");
#define DM_POOL_HOOK_PRINT(name, doc) fprintf(f, "  %-20s %12" PRIu64 "   # %s\n", #name, h.name, doc);
  DM_POOL_HOOK_COUNTERS(DM_POOL_HOOK_PRINT)
#undef DM_POOL_HOOK_PRINT
}
