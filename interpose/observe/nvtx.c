/*
 * nvtx.c — NVTX v3 ranges and markers in the "devmalloc" domain, so an
 * Nsight Systems timeline shows the shim's work (heap creation, load-time
 * re-links, re-link cache hits and misses, heap growth and trim) beside the
 * application's. Off unless DEVMALLOC_NVTX=1: then every call is one load
 * and a branch. NVTX is header-only (the CUDA toolkit's nvtx3): without a
 * profiler attached its calls do nothing.
 *
 * Locking: the domain is created once under pthread_once; NVTX itself is
 * thread-safe and ranges nest per thread.
 */
#include "nvtx.h"
#include "options/options.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <nvtx3/nvToolsExt.h>

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static nvtxDomainHandle_t g_dom;
static int g_on;

static void init(void) {
  if (!dm_options()->nvtx) return;
  g_dom = nvtxDomainCreateA("devmalloc");
  g_on = 1;
}

static int on(void) {
  pthread_once(&g_once, init);
  return g_on;
}

void dm_nvtx_init(void) { (void)on(); }

/* A range (push) or a marker, with a printf-formatted message. */
static void event(int range, const char *fmt, va_list ap) {
  char msg[256];
  vsnprintf(msg, sizeof msg, fmt, ap);
  nvtxEventAttributes_t a = {0};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.colorType = NVTX_COLOR_ARGB;
  a.color = range ? 0xff2e7d32u : 0xffc62828u; /* green ranges, red markers */
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = msg;
  if (range)
    nvtxDomainRangePushEx(g_dom, &a);
  else
    nvtxDomainMarkEx(g_dom, &a);
}

void dm_nvtx_push(const char *fmt, ...) {
  if (!on()) return;
  va_list ap;
  va_start(ap, fmt);
  event(1, fmt, ap);
  va_end(ap);
}

void dm_nvtx_pop(void) {
  if (on()) nvtxDomainRangePop(g_dom);
}

void dm_nvtx_mark(const char *fmt, ...) {
  if (!on()) return;
  va_list ap;
  va_start(ap, fmt);
  event(0, fmt, ap);
  va_end(ap);
}

void dm_obs_event(int kind, const char *label) {
  static const char *const what[] = {"?", "re-link cache hit", "re-link cache miss", "heap growth",
                                     "heap trim"};
  if (kind < DM_OBS_CACHE_HIT || kind > DM_OBS_HEAP_TRIM) kind = 0;
  dm_nvtx_mark("devmalloc: %s%s%s", what[kind], label ? ": " : "", label ? label : "");
}
