/*
 * trace_timer.c — the trace's periodic sampler (DEVMALLOC_TRACE_PERIOD=MS):
 * one host thread that calls the trace's sampler (every context) each MS
 * milliseconds, so the
 * heap trace also shows the heap while long kernels run (launch and sync
 * samples only see it between kernels). Started with the trace's first heap;
 * stopped and joined by the trace's exit handler before the final samples,
 * i.e. before the CUDA runtime's own exit teardown.
 *
 * May call: state.c, options/ (the log); it samples through the function
 * it is given.
 *
 * Locking: g_lock guards the running flag and the condition the thread
 * sleeps on; samples are taken without it (trace.c, ctxtab.c lock). The
 * thread runs with dm_tls_busy set, so driver calls it makes never re-enter
 * the hooks.
 */
#include "obs.h"

#include <pthread.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond;
static pthread_t g_thread;
static int g_running, g_stop;
static pid_t g_owner; /* the process that started the thread */
static unsigned g_period_ms;
static void (*g_sample)(const char *event);

static void *run(void *arg) {
  (void)arg;
  dm_tls_busy = 1;
  pthread_mutex_lock(&g_lock);
  while (!g_stop) {
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += g_period_ms / 1000;
    until.tv_nsec += (long)(g_period_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
      until.tv_sec++;
      until.tv_nsec -= 1000000000L;
    }
    while (!g_stop && pthread_cond_timedwait(&g_cond, &g_lock, &until) == 0) {}
    if (g_stop) break;
    pthread_mutex_unlock(&g_lock);
    g_sample("timer");
    pthread_mutex_lock(&g_lock);
  }
  pthread_mutex_unlock(&g_lock);
  return NULL;
}

void dm_trace_timer_start(unsigned period_ms, void (*sample)(const char *event)) {
  if (!period_ms || !sample) return;
  pthread_mutex_lock(&g_lock);
  if (!g_running) {
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&g_cond, &ca);
    pthread_condattr_destroy(&ca);
    g_period_ms = period_ms;
    g_sample = sample;
    g_stop = 0;
    if (pthread_create(&g_thread, NULL, run, NULL) == 0) {
      g_running = 1;
      g_owner = getpid();
    } else {
      dm_log(DM_LOG_WARN, "warning: cannot start the trace sampler thread: "
                          "samples at launches and synchronizations only");
    }
  }
  pthread_mutex_unlock(&g_lock);
}

void dm_trace_timer_stop(void) {
  pthread_mutex_lock(&g_lock);
  int join = g_running && g_owner == getpid();
  g_stop = 1;
  if (join) pthread_cond_signal(&g_cond);
  g_running = 0;
  pthread_mutex_unlock(&g_lock);
  if (join) pthread_join(g_thread, NULL);
}
