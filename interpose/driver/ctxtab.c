/*
 * ctxtab.c — one devmalloc heap per CUDA context: the table ctx -> {limit
 * state, heap}, heap creation with the virtualized size, teardown with a
 * stats snapshot, primary-context retain counts, the counters' sampler
 * (trace.c) and the stats summary (text, JSON or CSV: docs/stats.md).
 *
 * A context whose counters can no longer be read (a device fault such as an
 * illegal address poisons it; a context destroyed under us) is reported with
 * its last known counters and the status "context_lost".
 *
 * Heap creation runs with the context current (the caller, bind.c, pushed
 * it) and with the thread's stream-capture mode relaxed (also the caller).
 *
 * May call: trace.c (records, heap created), limit.c,
 * driver.c, state.c, array.c, the parts' tables, observe/, options/. The
 * real entry points only through the function real.c gives it
 * (dm_ctx_set_real). Called by: bind.c, the hook handlers, fork.c, real.c.
 *
 * Locking: one mutex (g_lock) guards the table, the snapshots and the
 * primary counts; it is held across heap creation so that two threads never
 * create two heaps for one context. It is never held while calling a hooked
 * entry point, and the host runtime reaches the driver through forwarders,
 * not hooks, so no hook can re-enter it. It may be held while calling
 * dm_trace_record (trace.c never calls back into this file with its lock).
 */
#include "shim.h"
#include "obs.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct dm_ctxent {
  CUcontext ctx;
  dm_limit_t limit;
  devmalloc_heap_t *heap;
  int failed; /* creation failed: do not retry */
  int device;
  unsigned long long id;   /* cuCtxGetId, for messages */
  int has_last;            /* last counters read successfully */
  int lost;                /* a read failed: the counters are gone */
  int released;            /* read before the primary context's last release */
  uint64_t check_reported; /* check failures already reported */
  devmalloc_stats_t last;
} dm_ctxent_t;

typedef dm_stats_rec_t dm_snap_t; /* a torn-down context's final record */
typedef struct {
  CUdevice dev;
  CUcontext ctx;
  int count;
} dm_primary_t;

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
  if (dm_grow_array((void **)&g_ents, &g_cap, g_n, sizeof *g_ents)) return NULL;
  e = &g_ents[g_n++];
  memset(e, 0, sizeof *e);
  e->ctx = ctx;
  e->device = -1;
  return e;
}

/* real.c's dm_real, given at the driver's first use (before dm_drv is
 * filled: no context reaches this table before it is set). */
static void *(*_Atomic g_real)(dm_hook_id_t);

void dm_ctx_set_real(void *(*real)(dm_hook_id_t)) { atomic_store(&g_real, real); }

static uint64_t free_device_bytes(void) {
  size_t fr = 0, tot = 0;
  void *(*real)(dm_hook_id_t) = atomic_load(&g_real);
  dm_pfn_cuMemGetInfo_v2 info = real ? (dm_pfn_cuMemGetInfo_v2)real(DM_ID_cuMemGetInfo_v2) : NULL;
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

/* DEVMALLOC_CHECK, DEVMALLOC_DENSE and DEVMALLOC_MIN_BLOCK (0 .. 8 KiB, checked when parsed)
 * on a new heap, before any kernel allocates from it. */
static void apply_heap_options(devmalloc_heap_t *h, const dm_options_t *o, unsigned long long id) {
  if (o->check && dm_heap_ops->set_check(h, 1) != DEVMALLOC_OK)
    dm_log(DM_LOG_WARN, "warning: DEVMALLOC_CHECK could not be set in context %llu", id);
  if (o->dense && dm_heap_ops->set_dense(h, 1) != DEVMALLOC_OK)
    dm_log(DM_LOG_WARN, "warning: DEVMALLOC_DENSE could not be set in context %llu", id);
  if (!o->min_block) return;
  devmalloc_status_t st = dm_heap_ops->set_min_block(h, o->min_block);
  if (st != DEVMALLOC_OK)
    dm_log(DM_LOG_WARN, "warning: DEVMALLOC_MIN_BLOCK could not be set in context %llu: %s", id,
           dm_heap_ops->status_string(st));
}

/* DEVMALLOC_GROW: a heap that grows, sized by limit.c (dm_limit_grow_bytes);
 * `fixed` bytes where the device has no VMM (the fixed heap's usual size). */
static devmalloc_status_t create_growing(CUcontext ctx, const dm_options_t *o, const dm_limit_t *l,
                                         size_t fixed, uint64_t fr, devmalloc_grow_config_t *gc,
                                         devmalloc_heap_t **h, const char **notice) {
  memset(gc, 0, sizeof *gc);
  dm_limit_grow_bytes(l, &o->heap_size, fr, (size_t)o->heap_initial, o->limit_is_max, &gc->max, &gc->initial);
  gc->step = (size_t)o->grow_step;
  gc->watermark = (size_t)o->grow_watermark;
  /* The runtime reads a wait of 0 as "its default" (200 ms); DEVMALLOC_GROW_WAIT=0
   * asks for no wait, so it gets the shortest the runtime keeps: 1 ms. */
  gc->wait_ms = o->grow_wait ? o->grow_wait : 1;
  gc->fallback = fixed;
  return dm_heap_ops->create_growing(ctx, gc, h, notice);
}

devmalloc_heap_t *dm_ctx_heap(CUcontext ctx) {
  const dm_options_t *o = dm_options();
  dm_nvtx_init(); /* the range below is pushed under the lock */
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
  dm_nvtx_push("devmalloc: create heap (%zu MiB, context %llu)", bytes >> 20, e->id);
  double t0 = dm_clock_ms();
  const char *notice = NULL;
  devmalloc_grow_config_t gc;
  devmalloc_status_t st = o->grow ? create_growing(ctx, o, &e->limit, bytes, fr, &gc, &h, &notice)
                                  : dm_heap_ops->create(ctx, bytes, &h);
  double took = dm_clock_ms() - t0;
  dm_nvtx_pop();
  if (st != DEVMALLOC_OK || !h) {
    e->failed = 1;
    h = NULL;
    dm_log(DM_LOG_WARN,
           "warning: cannot create a %zu-byte heap in context %llu (device %d): %s; "
           "device malloc of devmalloc modules returns NULL there",
           bytes, e->id, e->device, dm_heap_ops->status_string(st));
  } else if (o->grow && dm_heap_ops->grows(h)) {
    e->heap = h;
    e->limit.heap_created = 1;
    e->limit.heap_bytes = gc.initial;
    e->limit.grows = 1;
    devmalloc_stats_t s;
    e->limit.max_bytes = dm_heap_ops->stats(h, &s) == DEVMALLOC_OK ? s.max_bytes : gc.initial;
    apply_heap_options(h, o, e->id);
    dm_log(DM_LOG_INFO,
           "heap growing from %zu MiB up to %zu MiB created in context %llu (device %d) in %.2f ms%s",
           gc.initial >> 20, e->limit.max_bytes >> 20, e->id, e->device, took,
           o->heap_size.kind != DM_SIZE_UNSET    ? " [maximum: DEVMALLOC_HEAP_SIZE]"
           : e->limit.app_set && o->limit_is_max ? " [maximum: application limit]"
           : e->limit.app_set                    ? " [initial: application limit]"
                                                 : "");
  } else {
    if (notice) dm_log(DM_LOG_INFO, "context %llu: %s (%zu MiB)", e->id, notice, bytes >> 20);
    e->heap = h;
    e->limit.heap_created = 1;
    e->limit.heap_bytes = bytes;
    apply_heap_options(h, o, e->id);
    dm_log(DM_LOG_INFO, "heap of %zu MiB created in context %llu (device %d) in %.2f ms%s", bytes >> 20,
           e->id, e->device, took,
           o->heap_size.kind != DM_SIZE_UNSET ? " [DEVMALLOC_HEAP_SIZE]"
           : e->limit.app_set                 ? " [application limit]"
                                              : " [default]");
  }
  pthread_mutex_unlock(&g_lock);
  if (h && (o->stats || o->check)) arm_stats_once(); /* check: last report at exit */
  if (h) dm_obs_heap_created(ctx);
  return h;
}

dm_limit_action_t dm_ctx_limit_set(CUcontext ctx, size_t value) {
  pthread_mutex_lock(&g_lock);
  dm_ctxent_t *e = find_or_add(ctx);
  dm_limit_action_t a = e ? dm_limit_set(&e->limit, value) : DM_LIMIT_RECORD;
  if (e && a == DM_LIMIT_RESIZE) { /* created at an earlier limit call, never bound */
    dm_heap_ops->destroy(e->heap);
    e->heap = NULL;
    dm_log(DM_LOG_INFO,
           "heap of context %llu replaced: the application set a new limit (%zu) "
           "before any kernel used it",
           e->id, value);
  }
  if (e && a != DM_LIMIT_NOOP && a != DM_LIMIT_REJECT) e->failed = 0; /* a new size: try again */
  pthread_mutex_unlock(&g_lock);
  return a;
}

void dm_ctx_heap_bound(CUcontext ctx) {
  pthread_mutex_lock(&g_lock);
  dm_ctxent_t *e = find(ctx);
  if (e) e->limit.heap_bound = 1;
  pthread_mutex_unlock(&g_lock);
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

/* The record of e from counters s (NULL: none were ever read). */
static dm_stats_rec_t record_of(const dm_ctxent_t *e, const devmalloc_stats_t *s, dm_rec_status_t st,
                                dm_rec_counters_t c) {
  dm_stats_rec_t r = {e->id, e->device, st, s ? c : DM_REC_NONE, dm_obs_relinked_count(), {0}};
  if (s)
    r.s = *s;
  else
    r.s.heap_bytes = r.s.mapped_bytes = e->limit.heap_bytes; /* what was asked for */
  return r;
}

/* Read e's counters now; on failure the last known ones, status lost. */
/* Check mode: say so when blocks were found damaged since the last report. */
static void report_check(dm_ctxent_t *e, const devmalloc_stats_t *s) {
  if (s->check_failures <= e->check_reported) return;
  dm_log(DM_LOG_WARN,
         "check: context %llu: %llu block(s) written past their end so far (%llu new); the "
         "first, at 0x%llx, %llu bytes asked: found when a kernel freed it, before this "
         "point (docs/options.md, DEVMALLOC_CHECK)",
         e->id, (unsigned long long)s->check_failures,
         (unsigned long long)(s->check_failures - e->check_reported), (unsigned long long)s->check_first_bad,
         (unsigned long long)s->check_first_size);
  e->check_reported = s->check_failures;
}

static dm_stats_rec_t read_rec(dm_ctxent_t *e, dm_rec_status_t ok_status) {
  devmalloc_stats_t s;
  if (!e->lost && dm_heap_ops->stats(e->heap, &s) == DEVMALLOC_OK) {
    report_check(e, &s);
    e->last = s;
    e->has_last = 1;
    e->released = 0; /* readable: the context is still there */
    return record_of(e, &s, ok_status, DM_REC_EXACT);
  }
  if (!e->lost && !e->released)
    dm_log(DM_LOG_INFO,
           "counters of context %llu can no longer be read: reporting the "
           "last known ones",
           e->id);
  e->lost = 1;
  return record_of(e, e->has_last ? &e->last : NULL, e->released ? DM_REC_DESTROYED : DM_REC_LOST,
                   DM_REC_LAST_KNOWN);
}

static void keep_snapshot(const dm_stats_rec_t *r) {
  dm_snap_t *n = realloc(g_snaps, (g_nsnaps + 1) * sizeof *n);
  if (!n) return;
  g_snaps = n;
  g_snaps[g_nsnaps++] = *r;
}

int dm_ctx_sample(CUcontext ctx, dm_stats_rec_t *out) {
  int rc = -1;
  pthread_mutex_lock(&g_lock);
  dm_ctxent_t *e = find(ctx);
  if (e && e->heap) {
    *out = read_rec(e, DM_REC_LIVE);
    rc = 0;
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}

void dm_ctx_snapshot(CUcontext ctx) {
  if (!dm_obs_sampling()) return;
  pthread_mutex_lock(&g_lock);
  dm_ctxent_t *e = find(ctx);
  if (e && e->heap) {
    (void)read_rec(e, DM_REC_LIVE);
    e->released = !e->lost;
  }
  pthread_mutex_unlock(&g_lock);
}

void dm_ctx_teardown(CUcontext ctx, int alive) {
  pthread_mutex_lock(&g_lock);
  dm_ctxent_t *e = find(ctx);
  if (e) {
    if (e->heap && dm_obs_sampling()) {
      /* alive: read now, then free the heap; gone: its device memory went
       * with the context, only the last known counters are left */
      dm_stats_rec_t r = alive ? read_rec(e, DM_REC_DESTROYED)
                               : record_of(e, e->has_last ? &e->last : NULL,
                                           e->lost ? DM_REC_LOST : DM_REC_DESTROYED, DM_REC_LAST_KNOWN);
      keep_snapshot(&r);
      dm_trace_record(&r, "destroy");
    }
    if (e->heap) {
      if (alive) {
        devmalloc_status_t st = dm_heap_ops->destroy(e->heap);
        dm_log(DM_LOG_INFO, "heap of context %llu destroyed%s", e->id,
               st == DEVMALLOC_OK ? "" : " (with errors)");
      } else {
        dm_heap_ops->abandon(e->heap); /* host-side state only (a growing heap's thread) */
        dm_log(DM_LOG_INFO, "context %llu is gone; its heap is forgotten", e->id);
      }
    }
    *e = g_ents[--g_n];
  }
  pthread_mutex_unlock(&g_lock);
}

/* DEVMALLOC_TRIM: after a synchronization, unmap the free memory at the top
 * of ctx's heap (if it grows) when at least DM_TRIM_MIN_FREE of what is
 * mapped is free; at most once per DM_TRIM_PERIOD_NS in the process (the
 * check costs a read of the counters; the trim a small kernel). */
#define DM_TRIM_PERIOD_NS 2000000000ull
#define DM_TRIM_MIN_FREE (256ull << 20)
static _Atomic uint64_t g_last_trim;
void dm_ctx_trim(CUcontext ctx) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
  uint64_t last = atomic_load(&g_last_trim);
  if (now - last < DM_TRIM_PERIOD_NS || !atomic_compare_exchange_strong(&g_last_trim, &last, now)) return;
  pthread_mutex_lock(&g_lock);
  dm_ctxent_t *e = find(ctx);
  devmalloc_status_t st = DEVMALLOC_OK;
  devmalloc_stats_t s;
  int started = 0;
  if (e && e->heap && !e->lost && e->limit.grows && dm_heap_ops->stats(e->heap, &s) == DEVMALLOC_OK) {
    uint64_t meta = s.heap_bytes - s.pool_bytes,
             pool_mapped = s.mapped_bytes > meta ? s.mapped_bytes - meta : 0;
    if (pool_mapped > s.footprint_bytes + DM_TRIM_MIN_FREE) {
      st = dm_heap_ops->trim_start(e->heap, 0); /* the runtime's thread finishes it */
      started = st == DEVMALLOC_OK;
    }
  }
  pthread_mutex_unlock(&g_lock);
  if (st != DEVMALLOC_OK)
    dm_log(DM_LOG_WARN, "warning: trimming the heap of a context failed: %s", dm_heap_ops->status_string(st));
  else if (started)
    dm_log(DM_LOG_DEBUG, "trim started (%llu MiB mapped, %llu MiB in use)",
           (unsigned long long)(s.mapped_bytes >> 20), (unsigned long long)(s.footprint_bytes >> 20));
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

#ifdef DM_TESTING
void dm_ctx_reset_for_tests(void) {
  pthread_mutex_lock(&g_lock);
  for (size_t i = 0; i < g_n; i++)
    if (g_ents[i].heap) dm_heap_ops->destroy(g_ents[i].heap);
  g_n = 0;
  g_nsnaps = 0;
  g_nprim = 0;
  pthread_mutex_unlock(&g_lock);
}
#endif

/* --- stats at exit ------------------------------------------------------- */
static void print_text(FILE *f, const dm_stats_rec_t *r) {
  const devmalloc_stats_t *s = &r->s;
  const char *state = r->status == DM_REC_DESTROYED ? ", destroyed"
                      : r->status == DM_REC_LOST    ? ", context lost"
                                                    : "";
  if (r->counters == DM_REC_NONE) {
    fprintf(f,
            "devmalloc: stats: context %llu (device %d%s): heap %llu MiB, "
            "no counters could be read\n",
            r->ctx_id, r->device, state, (unsigned long long)(s->heap_bytes >> 20));
    return;
  }
  char heap[96];
  if (s->grows)
    snprintf(heap, sizeof heap, "heap grows: %llu MiB mapped (peak %llu, max %llu MiB, %llu growths)",
             (unsigned long long)(s->mapped_bytes >> 20), (unsigned long long)(s->mapped_peak >> 20),
             (unsigned long long)(s->max_bytes >> 20), (unsigned long long)s->growth_events);
  else
    snprintf(heap, sizeof heap, "heap %llu MiB", (unsigned long long)(s->heap_bytes >> 20));
  fprintf(f,
          "devmalloc: stats: context %llu (device %d%s%s): %s, allocs %llu, "
          "frees %llu, failures %llu, peak %llu bytes, large %llu\n",
          r->ctx_id, r->device, state, r->counters == DM_REC_LAST_KNOWN ? ", last known counters" : "", heap,
          (unsigned long long)s->allocs, (unsigned long long)s->frees, (unsigned long long)s->failures,
          (unsigned long long)s->peak_bytes, (unsigned long long)s->large_allocs);
  char title[96];
  snprintf(title, sizeof title, "devmalloc context %llu (device %d)", r->ctx_id, r->device);
  dm_heap_ops->stats_print(s, f, title);
}

/* Write recs in the chosen format to DEVMALLOC_STATS_FILE or the log. */
static void emit(const dm_stats_rec_t *recs, size_t n, int with_pool) {
  const dm_options_t *o = dm_options();
  FILE *f = NULL;
  if (o->stats_file && !(f = fopen(o->stats_file, "w")))
    dm_log(DM_LOG_WARN, "warning: cannot write DEVMALLOC_STATS_FILE=%s: stats go to the log", o->stats_file);
  if (!f) {
    int fd = dup(dm_log_fd());
    if (fd < 0 || !(f = fdopen(fd, "a"))) {
      if (fd >= 0) close(fd);
      return;
    }
  }
  char line[DM_REC_MAX];
  if (o->stats == DM_STATS_CSV && dm_rec_csv_header(line, sizeof line) > 0) fprintf(f, "%s\n", line);
  for (size_t i = 0; i < n; i++) {
    if (o->stats == DM_STATS_JSON && dm_rec_json(line, sizeof line, &recs[i], "\"record\":\"stats\"") > 0)
      fprintf(f, "%s\n", line);
    else if (o->stats == DM_STATS_CSV && dm_rec_csv_row(line, sizeof line, &recs[i]) > 0)
      fprintf(f, "%s\n", line);
    else if (o->stats == DM_STATS_TEXT)
      print_text(f, &recs[i]);
  }
  if (!n && o->stats == DM_STATS_TEXT) fprintf(f, "devmalloc: stats: no heap was created\n");
  fflush(f);
  if (with_pool && o->stats == DM_STATS_TEXT) dm_pool_ops->print_stats(f);
  fclose(f);
}

static void print_all(int with_pool) {
  pthread_mutex_lock(&g_lock);
  dm_stats_rec_t *recs = malloc((g_nsnaps + g_n + 1) * sizeof *recs);
  size_t n = 0;
  for (size_t i = 0; recs && i < g_nsnaps; i++) recs[n++] = g_snaps[i];
  for (size_t i = 0; recs && i < g_n; i++) {
    dm_ctxent_t *e = &g_ents[i];
    if (!e->heap) continue;
    CUcontext prev = NULL;
    int pushed = !e->lost && dm_drv.cuCtxPushCurrent_v2(e->ctx) == CUDA_SUCCESS;
    recs[n++] = read_rec(e, DM_REC_LIVE);
    if (pushed) dm_drv.cuCtxPopCurrent_v2(&prev);
  }
  pthread_mutex_unlock(&g_lock);
  if (recs) emit(recs, n, with_pool);
  free(recs);
}

void dm_ctx_print_stats(void) { print_all(1); }

static atomic_int g_printed;

static void at_exit_stats(void) {
  if (atomic_exchange(&g_printed, 1)) return;
  dm_tls_busy = 1;
  dm_ctx_print_stats();
}

/* A CUDA process whose summary was not printed at exit (no heap was created,
 * or none is alive) still gets it; a process that never used CUDA prints
 * nothing. */
__attribute__((destructor)) static void dm_stats_fini(void) {
  if (!dm_driver_used()) return;
  dm_log(DM_LOG_DEBUG, "shim unloaded (process exit)");
  if (!dm_options()->stats || atomic_load(&g_printed)) return;
  atomic_store(&g_printed, 1);
  if (dm_ctx_count() == 0) print_all(0); /* touches no driver: no live heap */
}

static pthread_once_t g_stats_once = PTHREAD_ONCE_INIT;
static void arm(void) { atexit(at_exit_stats); }
static void arm_stats_once(void) { pthread_once(&g_stats_once, arm); }
