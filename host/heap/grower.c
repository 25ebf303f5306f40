/*
 * grower.c — the service thread and trim of a heap that grows (growth.h).
 *
 * The device stores in x->target how many pool bytes it wants mapped (a
 * request that found the tree empty, or the watermark); the thread polls it,
 * maps whole steps from the current top with the ops until the target is
 * reached, and publishes x->mapped after each step (so waiting requests go
 * on early). When a map fails for lack of memory, x->refused = that target:
 * requests that need that much end in NULL at once; the thread tries again
 * when a larger target comes or after a pause (10 ms), and a trim that
 * unmaps clears the refusal. Trim: see dm_grower_trim_start.
 *
 * Polling backs off when idle (the rule: grow_backoff.h): after a pass that
 * found nothing to do (the target at or below mapped, or held back by a
 * standing refusal; no trim pending) the thread sleeps twice as long as
 * before, up to DM_GROW_IDLE_POLL_NS (1 ms; never less than poll_ns); a
 * pass that maps, or finds a trim pending, sets the sleep back to poll_ns.
 * The thread of an idle heap so wakes about once a millisecond instead of
 * every poll_ns (50 us by default), and the first request after an idle
 * period may wait up to that cap longer for the host. The wake-ups are
 * counted (dm_grower_stats_t.wakeups).
 *
 * Process exit: an atexit handler stops every service thread's mapping
 * (alive cleared, requests end in NULL) before the driver is torn down.
 * After fork the child has no service thread: its heaps are not usable (as
 * with any CUDA state in a forked child); stopping one there only frees the
 * grower (no join, no driver call).
 *
 * Locking: g->lock around mapping, trimming and stopping; the thread never
 * takes another lock and never waits for the device. The backoff's state
 * (the current sleep) is the thread's own; the wake-up count is an atomic
 * that only the thread writes.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "grow_backoff.h"
#include "growth.h"

struct dm_grower {
  dm_grow_host_t *x;
  dm_grow_cfg_t cfg;
  dm_grow_ops_t ops;
  void *ctx;
  pthread_mutex_t lock;
  int trim_busy;    /* atomic: a trim is under way (one at a time) */
  int trim_pending; /* atomic: its claim was launched; the thread finishes it */
  uint64_t trim_floor, last_freed;
  pthread_t thread;
  pid_t pid; /* the process that started the thread (fork: not its child) */
  int running;
  int stop;        /* atomic */
  uint64_t mapped; /* written under lock (atomic: the thread polls it) */
  uint64_t peak, events, trims, trimmed, refusals;
  uint64_t wakeups; /* atomic: written by the thread only */
  uint64_t refused_target, refused_at;
};

static volatile int g_exiting;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static void on_exit_stop(void) { __atomic_store_n(&g_exiting, 1, __ATOMIC_SEQ_CST); }
static void arm_exit(void) { atexit(on_exit_stop); }

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t mapped_now(dm_grower_t *g) { return __atomic_load_n(&g->mapped, __ATOMIC_SEQ_CST); }
static void set_mapped(dm_grower_t *g, uint64_t v) { __atomic_store_n(&g->mapped, v, __ATOMIC_SEQ_CST); }

static void publish(dm_grower_t *g) {
  __atomic_store_n(&g->x->mapped, g->mapped, __ATOMIC_SEQ_CST);
  if (g->mapped > g->peak) g->peak = g->mapped;
}

/* Map steps from the top until `want` is mapped. 0: reached, else the ops'
 * error. Caller holds g->lock. */
static int map_up_to(dm_grower_t *g, uint64_t want) {
  if (want > g->cfg.pool_bytes) want = g->cfg.pool_bytes;
  while (g->mapped < want) {
    uint64_t n = g->cfg.step;
    if (n > g->cfg.pool_bytes - g->mapped) n = g->cfg.pool_bytes - g->mapped;
    int e = g->ops.map(g->ctx, g->mapped, n);
    if (e) return e;
    set_mapped(g, g->mapped + n);
    publish(g);
  }
  return 0;
}

/* Map up to target t. 1: it tried to map (work done), 0: held back by a
 * standing refusal. Caller holds g->lock. */
static int serve(dm_grower_t *g, uint64_t t) {
  uint64_t now = now_ns();
  if (g->refused_target && t <= g->refused_target && now - g->refused_at < 10000000ull) return 0;
  uint64_t before = g->mapped;
  int e = map_up_to(g, t);
  if (g->mapped > before) g->events++;
  if (e) {
    g->refused_target = t;
    g->refused_at = now;
    g->refusals++;
    __atomic_store_n(&g->x->refused, t, __ATOMIC_SEQ_CST);
  } else if (g->refused_target) {
    g->refused_target = 0;
    __atomic_store_n(&g->x->refused, 0, __ATOMIC_SEQ_CST);
  }
  __atomic_store_n(&g->x->events, g->events, __ATOMIC_SEQ_CST);
  return 1;
}

static int poll_trim(dm_grower_t *g);

static void *service(void *arg) {
  dm_grower_t *g = arg;
  if (g->ops.thread_init) g->ops.thread_init(g->ctx);
  uint64_t sleep_ns = g->cfg.poll_ns;
  while (!__atomic_load_n(&g->stop, __ATOMIC_SEQ_CST)) {
    __atomic_add_fetch(&g->wakeups, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&g_exiting, __ATOMIC_SEQ_CST)) {
      __atomic_store_n(&g->x->alive, 0, __ATOMIC_SEQ_CST);
      break;
    }
    unsigned did = poll_trim(g) ? DM_PASS_TRIM : 0;
    uint64_t t = __atomic_load_n(&g->x->target, __ATOMIC_SEQ_CST);
    uint64_t m = mapped_now(g);
    if (t > m && m < g->cfg.pool_bytes) {
      pthread_mutex_lock(&g->lock);
      if (!__atomic_load_n(&g->stop, __ATOMIC_SEQ_CST))
        did |= serve(g, t) ? DM_PASS_MAPPED : DM_PASS_HELD_BACK;
      pthread_mutex_unlock(&g->lock);
    }
    sleep_ns = dm_grow_next_sleep(sleep_ns, did, g->cfg.poll_ns, DM_GROW_IDLE_POLL_NS);
    struct timespec ts = {0, (long)sleep_ns};
    nanosleep(&ts, NULL);
  }
  return NULL;
}

dm_grower_t *dm_grower_start(dm_grow_host_t *x, const dm_grow_cfg_t *cfg, const dm_grow_ops_t *ops, void *ctx,
                             int *err) {
  *err = -1;
  if (!cfg->step || cfg->step % DM_GROW_BYTES || cfg->pool_bytes < DM_GROW_BYTES) return NULL;
  dm_grower_t *g = calloc(1, sizeof *g);
  if (!g) return NULL;
  pthread_once(&g_once, arm_exit);
  g->x = x;
  g->cfg = *cfg;
  if (!g->cfg.poll_ns) g->cfg.poll_ns = 100000;
  if (g->cfg.poll_ns >= 1000000000ull) g->cfg.poll_ns = 999999999ull;
  g->ops = *ops;
  g->ctx = ctx;
  pthread_mutex_init(&g->lock, NULL);
  uint64_t init = (cfg->initial + cfg->step - 1) / cfg->step * cfg->step;
  if (init < cfg->step) init = cfg->step;
  g->cfg.initial = init < cfg->pool_bytes ? init : cfg->pool_bytes;
  int e = map_up_to(g, g->cfg.initial);
  if (e) {
    *err = e;
    if (g->mapped) g->ops.unmap(g->ctx, 0, g->mapped); /* never: map_up_to maps step by step */
    free(g);
    return NULL;
  }
  __atomic_store_n(&x->target, g->mapped, __ATOMIC_SEQ_CST);
  __atomic_store_n(&x->alive, 1, __ATOMIC_SEQ_CST);
  if (pthread_create(&g->thread, NULL, service, g) != 0) {
    __atomic_store_n(&x->alive, 0, __ATOMIC_SEQ_CST);
    dm_grower_stop(g);
    return NULL;
  }
  g->running = 1;
  g->pid = getpid();
  *err = 0;
  return g;
}

/* Unmap the steps above `to` (a step boundary), top first. Caller holds the lock. */
static void unmap_down_to(dm_grower_t *g, uint64_t to) {
  while (g->mapped > to) {
    uint64_t top = g->mapped, start = (top - 1) / g->cfg.step * g->cfg.step;
    g->ops.unmap(g->ctx, start, top - start);
    set_mapped(g, start);
  }
}

/* The trim's second half, on the service thread (or stop): everything above
 * the claimed top r is unmapped, mapped lowered, the ceiling lifted. Caller
 * holds the lock. */
static void finish_trim(dm_grower_t *g, uint64_t r) {
  r = (r + g->cfg.step - 1) / g->cfg.step * g->cfg.step;
  if (r < g->trim_floor) r = g->trim_floor;
  uint64_t before = g->mapped;
  g->last_freed = 0;
  if (r < before) {
    unmap_down_to(g, r);
    g->last_freed = before - g->mapped;
    g->trimmed += g->last_freed;
    g->trims++;
    /* memory went back to the device: a refusal is stale (requests would
     * end in NULL at once while it stands) */
    g->refused_target = 0;
    __atomic_store_n(&g->x->refused, 0, __ATOMIC_SEQ_CST);
  }
  publish(g);
  /* mapped is lowered: lift the ceiling (requests may release again) */
  __atomic_store_n(&g->x->ceiling, 0, __ATOMIC_SEQ_CST);
}

/* Finish a trim whose claim is done. 1: a trim is (or was) pending, 0: none. */
static int poll_trim(dm_grower_t *g) {
  if (!__atomic_load_n(&g->trim_pending, __ATOMIC_SEQ_CST)) return 0;
  uint64_t r = __atomic_load_n(&g->x->trim_result, __ATOMIC_SEQ_CST);
  if (r == UINT64_MAX) return 1; /* the claim (a kernel) has not finished */
  pthread_mutex_lock(&g->lock);
  finish_trim(g, r);
  pthread_mutex_unlock(&g->lock);
  __atomic_store_n(&g->trim_pending, 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&g->trim_busy, 0, __ATOMIC_SEQ_CST);
  return 1;
}

int dm_grower_trim_start(dm_grower_t *g, uint64_t keep,
                         int (*launch)(void *arg, uint64_t floor, uint64_t unit), void *arg) {
  if (__atomic_exchange_n(&g->trim_busy, 1, __ATOMIC_SEQ_CST)) return 0; /* one under way */
  uint64_t floor = keep > g->cfg.initial ? keep : g->cfg.initial;
  floor = (floor + g->cfg.step - 1) / g->cfg.step * g->cfg.step;
  if (mapped_now(g) <= floor || __atomic_load_n(&g->stop, __ATOMIC_SEQ_CST)) {
    __atomic_store_n(&g->trim_busy, 0, __ATOMIC_SEQ_CST);
    return 0;
  }
  g->trim_floor = floor;
  __atomic_store_n(&g->x->trim_result, UINT64_MAX, __ATOMIC_SEQ_CST);
  /* The claim runs where the tree lives (a kernel on the GPU) while the
   * service thread keeps mapping for running kernels; it sets a ceiling at
   * its new top and writes the top to x->trim_result; the service thread
   * then finishes the trim. Nobody waits for the kernel with a lock held. */
  if (launch(arg, floor, g->cfg.step) != 0) {
    __atomic_store_n(&g->trim_busy, 0, __ATOMIC_SEQ_CST);
    return -1;
  }
  __atomic_store_n(&g->trim_pending, 1, __ATOMIC_SEQ_CST);
  return 1;
}

uint64_t dm_grower_trim(dm_grower_t *g, uint64_t keep,
                        int (*launch)(void *arg, uint64_t floor, uint64_t unit), void *arg, int *err) {
  *err = 0;
  int st;
  /* wait for a trim under way (the shim's), then run ours */
  struct timespec ts = {0, 50000};
  while ((st = dm_grower_trim_start(g, keep, launch, arg)) == 0 &&
         __atomic_load_n(&g->trim_busy, __ATOMIC_SEQ_CST) && !__atomic_load_n(&g->stop, __ATOMIC_SEQ_CST))
    nanosleep(&ts, NULL);
  if (st < 0) *err = 1;
  if (st <= 0) return 0;
  while (__atomic_load_n(&g->trim_busy, __ATOMIC_SEQ_CST) && !__atomic_load_n(&g->stop, __ATOMIC_SEQ_CST))
    nanosleep(&ts, NULL);
  pthread_mutex_lock(&g->lock);
  uint64_t freed = g->last_freed;
  pthread_mutex_unlock(&g->lock);
  return freed;
}

void dm_grower_stop(dm_grower_t *g) {
  if (!g) return;
  if (g->running && g->pid != getpid()) { /* a forked child: no thread, no usable driver state */
    free(g);
    return;
  }
  pthread_mutex_lock(&g->lock);
  __atomic_store_n(&g->stop, 1, __ATOMIC_SEQ_CST);
  __atomic_store_n(&g->x->alive, 0, __ATOMIC_SEQ_CST);
  pthread_mutex_unlock(&g->lock);
  if (g->running) pthread_join(g->thread, NULL);
  unmap_down_to(g, 0);
  pthread_mutex_destroy(&g->lock);
  free(g);
}

void dm_grower_stats(dm_grower_t *g, dm_grower_stats_t *out) {
  memset(out, 0, sizeof *out);
  if (!g) return;
  pthread_mutex_lock(&g->lock);
  out->mapped = g->mapped;
  out->peak = g->peak;
  out->events = g->events;
  out->trims = g->trims;
  out->trimmed = g->trimmed;
  out->refusals = g->refusals;
  out->wakeups = __atomic_load_n(&g->wakeups, __ATOMIC_SEQ_CST);
  pthread_mutex_unlock(&g->lock);
}
