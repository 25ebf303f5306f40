/*
 * ctxtab.c — one devmalloc heap per CUDA context: the table ctx -> {limit
 * state, heap}, heap creation with the virtualized size, teardown with a
 * stats snapshot, primary-context retain counts, and the stats summary.
 *
 * Heap creation runs with the context current (the caller, bind.c, pushed
 * it) and with the thread's stream-capture mode relaxed (also the caller).
 *
 * Locking: one mutex (g_lock) guards the table, the snapshots and the
 * primary counts; it is held across heap creation so that two threads never
 * create two heaps for one context. It is never held while calling a hooked
 * entry point, and the host runtime reaches the driver through forwarders,
 * not hooks, so no hook can re-enter it.
 */
#include "shim.h"
#include "pool_hooks.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct dm_ctxent {
  CUcontext ctx;
  dm_limit_t limit;
  devmalloc_heap_t *heap;
  int failed;                 /* creation failed: do not retry */
  int device;
  unsigned long long id;      /* cuCtxGetId, for messages */
  int has_last;               /* stats read just before a possible destroy */
  devmalloc_stats_t last;
} dm_ctxent_t;

typedef struct { unsigned long long id; int device; size_t bytes; devmalloc_stats_t s; } dm_snap_t;
typedef struct { CUdevice dev; CUcontext ctx; int count; } dm_primary_t;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static dm_ctxent_t *g_ents;
static size_t g_n, g_cap;
static dm_snap_t *g_snaps;
static size_t g_nsnaps;
static dm_primary_t g_prim[64];
static size_t g_nprim;

void dm_ctx_fork(dm_fork_phase_t ph) { dm_mutex_fork(&g_lock, ph); }

static dm_ctxent_t *find(CUcontext ctx) {
  for (size_t i = 0; i < g_n; i++)
    if (g_ents[i].ctx == ctx) return &g_ents[i];
  return NULL;
}

static dm_ctxent_t *find_or_add(CUcontext ctx) {
  dm_ctxent_t *e = find(ctx);
  if (e) return e;
  if (g_n == g_cap) {
    size_t cap = g_cap ? 2 * g_cap : 8;
    dm_ctxent_t *n = realloc(g_ents, cap * sizeof *n);
    if (!n) return NULL;
    g_ents = n;
    g_cap = cap;
  }
  e = &g_ents[g_n++];
  memset(e, 0, sizeof *e);
  e->ctx = ctx;
  e->device = -1;
  return e;
}

static uint64_t free_device_bytes(void) {
  size_t fr = 0, tot = 0;
  dm_pfn_cuMemGetInfo_v2 info = (dm_pfn_cuMemGetInfo_v2)dm_real(DM_ID_cuMemGetInfo_v2);
  if (info && info(&fr, &tot) == CUDA_SUCCESS) return fr;
  return 0;
}

static void arm_stats_once(void);

devmalloc_heap_t *dm_ctx_heap_peek(CUcontext ctx) {
  pthread_mutex_lock(&g_lock);
  dm_ctxent_t *e = find(ctx);
  devmalloc_heap_t *h = e ? e->heap : NULL;
  pthread_mutex_unlock(&g_lock);
  return h;
}

devmalloc_heap_t *dm_ctx_heap(CUcontext ctx) {
  const dm_options_t *o = dm_options();
  pthread_mutex_lock(&g_lock);
  dm_ctxent_t *e = find_or_add(ctx);
  devmalloc_heap_t *h = NULL;
  if (!e || e->heap || e->failed) {
    h = e ? e->heap : NULL;
    pthread_mutex_unlock(&g_lock);
    return h;
  }
  uint64_t fr = o->heap_size.kind == DM_SIZE_FRACTION ? free_device_bytes() : 0;
  size_t bytes = dm_limit_heap_bytes(&e->limit, &o->heap_size, fr);
  CUdevice dev = -1;
  if (dm_drv.cuCtxGetDevice(&dev) == CUDA_SUCCESS) e->device = dev;
  (void)dm_drv.cuCtxGetId(ctx, &e->id);
  devmalloc_status_t st = dm_heap_ops->create(ctx, bytes, &h);
  if (st != DEVMALLOC_OK || !h) {
    e->failed = 1;
    h = NULL;
    dm_log(DM_LOG_WARN,
           "warning: cannot create a %zu-byte heap in context %llu (device %d): %s; "
           "device malloc of devmalloc modules returns NULL there",
           bytes, e->id, e->device, dm_heap_ops->status_string(st));
  } else {
    e->heap = h;
    e->limit.heap_created = 1;
    e->limit.heap_bytes = bytes;
    dm_log(DM_LOG_INFO, "heap of %zu MiB created in context %llu (device %d)%s",
           bytes >> 20, e->id, e->device,
           o->heap_size.kind != DM_SIZE_UNSET ? " [DEVMALLOC_HEAP_SIZE]"
           : e->limit.app_set ? " [application limit]" : " [default]");
  }
  pthread_mutex_unlock(&g_lock);
  if (h && o->stats) arm_stats_once();
  return h;
}

dm_limit_action_t dm_ctx_limit_set(CUcontext ctx, size_t value) {
  pthread_mutex_lock(&g_lock);
  dm_ctxent_t *e = find_or_add(ctx);
  dm_limit_action_t a = e ? dm_limit_set(&e->limit, value) : DM_LIMIT_RECORD;
  pthread_mutex_unlock(&g_lock);
  return a;
}

int dm_ctx_limit_get(CUcontext ctx, size_t *out) {
  const dm_options_t *o = dm_options();
  uint64_t fr = o->heap_size.kind == DM_SIZE_FRACTION ? free_device_bytes() : 0;
  pthread_mutex_lock(&g_lock);
  dm_ctxent_t *e = find(ctx);
  dm_limit_t none = {0};
  size_t v = dm_limit_report(e ? &e->limit : &none, &o->heap_size, fr, dm_candidates());
  pthread_mutex_unlock(&g_lock);
  if (!v) return 0;
  *out = v;
  return 1;
}

static void keep_snapshot(const dm_ctxent_t *e, const devmalloc_stats_t *s) {
  dm_snap_t *n = realloc(g_snaps, (g_nsnaps + 1) * sizeof *n);
  if (!n) return;
  g_snaps = n;
  g_snaps[g_nsnaps++] = (dm_snap_t){e->id, e->device, e->limit.heap_bytes, *s};
}

static void snapshot(dm_ctxent_t *e) {
  devmalloc_stats_t s;
  if (dm_heap_ops->stats(e->heap, &s) == DEVMALLOC_OK) keep_snapshot(e, &s);
  else if (e->has_last) keep_snapshot(e, &e->last);
}

void dm_ctx_snapshot(CUcontext ctx) {
  if (!dm_options()->stats) return;
  pthread_mutex_lock(&g_lock);
  dm_ctxent_t *e = find(ctx);
  if (e && e->heap && dm_heap_ops->stats(e->heap, &e->last) == DEVMALLOC_OK) e->has_last = 1;
  pthread_mutex_unlock(&g_lock);
}

void dm_ctx_teardown(CUcontext ctx, int alive) {
  pthread_mutex_lock(&g_lock);
  dm_ctxent_t *e = find(ctx);
  if (e) {
    if (e->heap && alive) {
      if (dm_options()->stats) snapshot(e);
      devmalloc_status_t st = dm_heap_ops->destroy(e->heap);
      dm_log(DM_LOG_INFO, "heap of context %llu destroyed%s", e->id,
             st == DEVMALLOC_OK ? "" : " (with errors)");
    } else if (e->heap) {
      /* the context, and the heap's device memory with it, are gone */
      if (e->has_last) keep_snapshot(e, &e->last);
      dm_log(DM_LOG_INFO, "context %llu is gone; its heap is forgotten", e->id);
    }
    *e = g_ents[--g_n];
  }
  pthread_mutex_unlock(&g_lock);
}

/* --- primary contexts ----------------------------------------------------- */
void dm_ctx_primary_retained(CUdevice dev, CUcontext ctx) {
  pthread_mutex_lock(&g_lock);
  size_t i;
  for (i = 0; i < g_nprim && g_prim[i].dev != dev; i++) {}
  if (i == g_nprim && g_nprim < sizeof g_prim / sizeof g_prim[0])
    g_prim[g_nprim++] = (dm_primary_t){dev, ctx, 0};
  if (i < g_nprim) {
    g_prim[i].ctx = ctx;
    g_prim[i].count++;
  }
  pthread_mutex_unlock(&g_lock);
}

CUcontext dm_ctx_primary_of(CUdevice dev) {
  CUcontext c = NULL;
  pthread_mutex_lock(&g_lock);
  for (size_t i = 0; i < g_nprim; i++)
    if (g_prim[i].dev == dev) c = g_prim[i].ctx;
  pthread_mutex_unlock(&g_lock);
  return c;
}

int dm_ctx_primary_released(CUdevice dev) {
  int left = -1;
  pthread_mutex_lock(&g_lock);
  for (size_t i = 0; i < g_nprim; i++)
    if (g_prim[i].dev == dev) {
      if (g_prim[i].count > 0) g_prim[i].count--;
      left = g_prim[i].count;
    }
  pthread_mutex_unlock(&g_lock);
  return left;
}

size_t dm_ctx_count(void) {
  size_t n = 0;
  pthread_mutex_lock(&g_lock);
  for (size_t i = 0; i < g_n; i++) n += g_ents[i].heap != NULL;
  pthread_mutex_unlock(&g_lock);
  return n;
}

void dm_ctx_reset_for_tests(void) {
  pthread_mutex_lock(&g_lock);
  for (size_t i = 0; i < g_n; i++)
    if (g_ents[i].heap) dm_heap_ops->destroy(g_ents[i].heap);
  g_n = 0;
  g_nsnaps = 0;
  g_nprim = 0;
  pthread_mutex_unlock(&g_lock);
}

/* --- stats at exit ------------------------------------------------------- */
/* "heap N MiB" is the size the shim asked for (limit / env / default). */
static void print_one(FILE *f, unsigned long long id, int dev, size_t bytes,
                      const devmalloc_stats_t *s, const char *state) {
  fprintf(f,
          "devmalloc: stats: context %llu (device %d%s): heap %llu MiB, allocs %llu, "
          "frees %llu, failures %llu, peak %llu bytes, large %llu\n",
          id, dev, state, (unsigned long long)(bytes >> 20),
          (unsigned long long)s->allocs, (unsigned long long)s->frees,
          (unsigned long long)s->failures, (unsigned long long)s->peak_bytes,
          (unsigned long long)s->large_allocs);
  char title[96];
  snprintf(title, sizeof title, "devmalloc context %llu (device %d)", id, dev);
  dm_heap_ops->stats_print(s, f, title);
  fflush(f);
}

void dm_ctx_print_stats(void) {
  int fd = dup(dm_log_fd());
  FILE *f = fd >= 0 ? fdopen(fd, "a") : NULL;
  if (!f) return;
  pthread_mutex_lock(&g_lock);
  for (size_t i = 0; i < g_nsnaps; i++)
    print_one(f, g_snaps[i].id, g_snaps[i].device, g_snaps[i].bytes, &g_snaps[i].s, ", destroyed");
  for (size_t i = 0; i < g_n; i++) {
    dm_ctxent_t *e = &g_ents[i];
    if (!e->heap) continue;
    devmalloc_stats_t s;
    CUcontext prev = NULL;
    int pushed = dm_drv.cuCtxPushCurrent_v2(e->ctx) == CUDA_SUCCESS;
    devmalloc_status_t st = dm_heap_ops->stats(e->heap, &s);
    if (pushed) dm_drv.cuCtxPopCurrent_v2(&prev);
    if (st == DEVMALLOC_OK) print_one(f, e->id, e->device, e->limit.heap_bytes, &s, "");
    else if (e->has_last) print_one(f, e->id, e->device, e->limit.heap_bytes, &e->last, ", before release");
    else fprintf(f, "devmalloc: stats: context %llu (device %d): unavailable: %s\n",
                 e->id, e->device, dm_heap_ops->status_string(st));
  }
  if (!g_nsnaps && !g_n) fprintf(f, "devmalloc: stats: no heap was created\n");
  pthread_mutex_unlock(&g_lock);
  dm_pool_print_stats(f);
  fclose(f);
}

static atomic_int g_printed;

static void at_exit_stats(void) {
  if (atomic_exchange(&g_printed, 1)) return;
  dm_tls_busy = 1;
  dm_ctx_print_stats();
}

/* A CUDA process that never created a heap still gets its (empty) summary;
 * a process that never used CUDA prints nothing. */
__attribute__((destructor)) static void dm_stats_fini(void) {
  if (!dm_driver_used() || !dm_options()->stats || atomic_load(&g_printed)) return;
  atomic_store(&g_printed, 1);
  int fd = dm_log_fd();
  static const char msg[] = "devmalloc: stats: no heap was created\n";
  if (dm_ctx_count() == 0) {
    if (write(fd, msg, sizeof msg - 1) < 0) return;
  }
}

static pthread_once_t g_stats_once = PTHREAD_ONCE_INIT;
static void arm(void) { atexit(at_exit_stats); }
static void arm_stats_once(void) { pthread_once(&g_stats_once, arm); }
