/*
 * trace.c — the heap timeline (DEVMALLOC_TRACE=FILE): samples of each
 * context's counters at kernel launches and synchronizations, one JSON line
 * each (docs/stats.md); also keeps the last known counters fresh when only
 * DEVMALLOC_STATS is on, and counts load-time re-links.
 *
 * When a sample is due (per context): at a launch, when the last sample is
 * older than DEVMALLOC_TRACE_INTERVAL; at a synchronization, also when
 * kernels were launched since the last sample and it is at least a quarter
 * of the interval old. With only DEVMALLOC_STATS on, the interval alone.
 * Counters are read through the heap's own non-blocking stream, so a sample
 * never waits for the application's kernels.
 *
 * May call: trace_timer.c, driver.c, state.c, array.c, observe/, options/.
 * Counters are read only through ctxtab.c's sampler, which real.c hands it at
 * the driver's first use (dm_trace_set_sampler), so ctxtab.c calls this file
 * and never the reverse.
 *
 * Locking: g_lock guards the per-context table, the file descriptor and the
 * order of lines; it is released before reading counters (ctxtab.c takes
 * its own lock and may call dm_trace_record with it held: order ctxtab ->
 * trace, never the reverse).
 */
#include "obs.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MS 1000000ull
#define NAME_MAX_LEN 160

typedef struct {
  CUcontext ctx;
  uint64_t last_ns;         /* last sample taken (0: none) */
  uint64_t launches, since; /* launches in total / since the last sample */
  const void *kf;           /* last kernel launched and its name */
  char kname[NAME_MAX_LEN];
} tctx_t;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static tctx_t *g_tab;
static size_t g_n, g_cap;
static int g_fd = -1, g_failed;
static uint64_t g_t0;
static atomic_uint_fast64_t g_relinked;
static atomic_int g_mode = -1; /* -1 unknown, 0 off, 1 stats only, 2 trace */
/* The context table's sampler (ctxtab.c's dm_ctx_sample), set by real.c at
 * the driver's first use, before any heap exists: until then no context has
 * counters to read. */
static _Atomic(dm_ctx_sampler_fn) g_sampler;

void dm_trace_set_sampler(dm_ctx_sampler_fn sample) { atomic_store(&g_sampler, sample); }

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int mode(void) {
  int m = atomic_load_explicit(&g_mode, memory_order_relaxed);
  if (m >= 0) return m;
  const dm_options_t *o = dm_options();
  m = o->trace ? 2 : (o->stats || o->check) ? 1 : 0;
  atomic_store(&g_mode, m);
  return m;
}

int dm_obs_sampling(void) { return mode() != 0; }

void dm_obs_relinked(void) { atomic_fetch_add(&g_relinked, 1); }
uint64_t dm_obs_relinked_count(void) { return atomic_load(&g_relinked); }

static tctx_t *entry(CUcontext ctx) {
  for (size_t i = 0; i < g_n; i++)
    if (g_tab[i].ctx == ctx) return &g_tab[i];
  if (dm_grow_array((void **)&g_tab, &g_cap, g_n, sizeof *g_tab)) return NULL;
  tctx_t *e = &g_tab[g_n++];
  memset(e, 0, sizeof *e);
  e->ctx = ctx;
  return e;
}

/* Kernel names are identifiers (mangled or not); anything else becomes '?'
 * so the name is always a valid JSON string. */
static void set_name(tctx_t *e, const void *f) {
  const char *nm = NULL;
  e->kf = f;
  if (dm_drv.cuFuncGetName(&nm, (CUfunction)f) != CUDA_SUCCESS || !nm)
    if (dm_drv.cuKernelGetName(&nm, (CUkernel)f) != CUDA_SUCCESS) nm = NULL;
  size_t i = 0;
  for (; nm && nm[i] && i + 1 < sizeof e->kname; i++) {
    char c = nm[i];
    e->kname[i] = (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') ? c : '?';
  }
  e->kname[i] = 0;
}

/* Path with "%p" replaced by the process id. */
static void expand(const char *in, char *out, size_t n) {
  size_t k = 0;
  for (; *in && k + 1 < n; in++) {
    if (in[0] == '%' && in[1] == 'p') {
      k += (size_t)snprintf(out + k, n - k, "%d", (int)getpid());
      in++;
      if (k >= n) k = n - 1;
    } else
      out[k++] = *in;
  }
  out[k] = 0;
}

/* Called with g_lock held. */
static int open_trace(void) {
  if (g_fd >= 0) return 0;
  if (g_failed) return -1;
  char path[4096], head[256];
  expand(dm_options()->trace, path, sizeof path);
  g_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (g_fd < 0) {
    g_failed = 1;
    atomic_store(&g_mode, dm_options()->stats ? 1 : 0); /* sample no more for it */
    dm_log(DM_LOG_WARN, "warning: cannot open trace file %s: no trace is written", path);
    return -1;
  }
  g_t0 = now_ns();
  int k = snprintf(head, sizeof head,
                   "{\"record\":\"trace\",\"version\":1,\"pid\":%d,\"interval_ms\":%u,"
                   "\"period_ms\":%u,\"devmalloc\":\"%s\"}\n",
                   (int)getpid(), dm_options()->trace_interval, dm_options()->trace_period,
                   DEVMALLOC_VERSION_STRING);
  if (write(g_fd, head, (size_t)k) < 0) {}
  return 0;
}

static void write_sample(const dm_stats_rec_t *r, const char *event, const char *kname, uint64_t launches) {
  char extra[NAME_MAX_LEN + 160], line[DM_REC_MAX];
  pthread_mutex_lock(&g_lock);
  if (open_trace() == 0) {
    double t = (double)(now_ns() - g_t0) / 1e9;
    if (kname && *kname)
      snprintf(extra, sizeof extra,
               "\"record\":\"sample\",\"t\":%.6f,\"event\":\"%s\",\"kernel\":\"%s\",\"launches\":%llu", t,
               event, kname, (unsigned long long)launches);
    else
      snprintf(extra, sizeof extra,
               "\"record\":\"sample\",\"t\":%.6f,\"event\":\"%s\",\"kernel\":null,\"launches\":%llu", t,
               event, (unsigned long long)launches);
    int k = dm_rec_json(line, sizeof line - 1, r, extra);
    if (k > 0) {
      line[k++] = '\n';
      if (write(g_fd, line, (size_t)k) < 0) {}
    }
  }
  pthread_mutex_unlock(&g_lock);
}

void dm_trace_record(const dm_stats_rec_t *r, const char *event) {
  if (mode() == 2) write_sample(r, event, NULL, 0);
}

/* Take the sample decided under the lock (kname/launches copied out). The
 * read synchronizes the heap's own stream, which a global-mode stream
 * capture elsewhere would forbid: the thread's capture mode is relaxed for
 * it, as bind.c does for binding. */
static void take(CUcontext ctx, const char *event, const char *kname, uint64_t launches) {
  dm_stats_rec_t r;
  CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
  dm_tls_busy++;
  int relaxed = dm_drv.cuThreadExchangeStreamCaptureMode(&m) == CUDA_SUCCESS;
  dm_ctx_sampler_fn sample = atomic_load(&g_sampler);
  int ok = sample && sample(ctx, &r) == 0;
  if (relaxed) dm_drv.cuThreadExchangeStreamCaptureMode(&m);
  dm_tls_busy--;
  if (ok && mode() == 2) write_sample(&r, event, kname, launches);
}

int dm_trace_due(uint64_t age_ns, uint64_t since, dm_tpoint_t tp, unsigned interval_ms, int tracing) {
  uint64_t iv = (uint64_t)interval_ms * MS, gap = iv / 4;
  return age_ns >= iv || (tp == DM_TP_SYNC && tracing && since && age_ns >= gap);
}

static void point(CUcontext ctx, const void *f, dm_tpoint_t tp) {
  uint64_t t = now_ns();
  char kname[NAME_MAX_LEN];
  uint64_t launches = 0;
  int due = 0;
  pthread_mutex_lock(&g_lock);
  tctx_t *e = entry(ctx);
  if (e) {
    if (tp == DM_TP_LAUNCH) {
      e->launches++;
      e->since++;
      if (f && f != e->kf) set_name(e, f);
    }
    uint64_t age = e->last_ns ? t - e->last_ns : UINT64_MAX;
    due = dm_trace_due(age, e->since, tp, dm_options()->trace_interval, mode() == 2);
    if (due) {
      e->last_ns = t;
      e->since = 0;
      launches = e->launches;
      memcpy(kname, e->kname, sizeof kname);
    }
  }
  pthread_mutex_unlock(&g_lock);
  if (due) take(ctx, tp == DM_TP_LAUNCH ? "launch" : "sync", kname, launches);
}

void dm_obs_launch(const void *f, CUstream s) {
  if (!dm_obs_sampling()) return;
  CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
  if (dm_drv.cuStreamIsCapturing(s, &cs) == CUDA_SUCCESS && cs != CU_STREAM_CAPTURE_STATUS_NONE)
    return; /* recorded into a graph, not launched now */
  CUcontext ctx = dm_stream_ctx(s);
  if (ctx) point(ctx, f, DM_TP_LAUNCH);
}

void dm_obs_sync(CUcontext ctx) {
  if (ctx && dm_obs_sampling()) point(ctx, NULL, DM_TP_SYNC);
}

void dm_trace_sample_all(const char *event) {
  pthread_mutex_lock(&g_lock);
  size_t n = g_n;
  tctx_t *copy = n ? malloc(n * sizeof *copy) : NULL;
  if (copy) memcpy(copy, g_tab, n * sizeof *copy);
  pthread_mutex_unlock(&g_lock);
  for (size_t i = 0; copy && i < n; i++) take(copy[i].ctx, event, copy[i].kname, copy[i].launches);
  free(copy);
}

/* At exit: the timer stops, then a last sample of every context still alive. */
static void at_exit_trace(void) {
  dm_tls_busy = 1;
  dm_trace_timer_stop();
  dm_trace_sample_all("exit");
}

static pthread_once_t g_exit_once = PTHREAD_ONCE_INIT;
static void arm(void) {
  atexit(at_exit_trace);
  if (dm_options()->trace_period) dm_trace_timer_start(dm_options()->trace_period, dm_trace_sample_all);
}

void dm_obs_heap_created(CUcontext ctx) {
  if (mode() != 2) return;
  pthread_once(&g_exit_once, arm);
  pthread_mutex_lock(&g_lock);
  tctx_t *e = entry(ctx);
  if (e) e->last_ns = now_ns();
  pthread_mutex_unlock(&g_lock);
  take(ctx, "create", NULL, 0);
}
