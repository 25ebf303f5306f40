/*
 * jit_ahead.c — the re-link's cache read, done while the application's first
 * context is created instead of in the first launch of each module.
 *
 * With lazy loading the runtime loads a module at its first launch, and the
 * load hook's re-link of an image the cache holds (hook_load.c) reads,
 * checks and decompresses about a megabyte there: most of what the shim's
 * start costs beyond the relinked program's. The runtime creates the primary
 * context (cuDevicePrimaryCtxRetain, a hundred milliseconds and more) before
 * any launch, so that hook starts one thread that finds the executable's own
 * fatbins (image/exe_fatbins.c) and reads their re-linked images for that
 * device from the cache (dm_relink_read_ahead: cache hits only, no JIT link,
 * no context), while the driver creates the context; the hook joins it
 * before it returns. The load then takes the image (relink/ahead.h). So the
 * thread lives only inside that call, with every signal blocked, and leaves
 * nothing running behind the application. Once per process, at the first
 * retain; not with DEVMALLOC_JIT_AHEAD=0 or DEVMALLOC_JIT=off (a cache that
 * is off reads nothing).
 *
 * May call: image/ (exe_fatbins.c, image_bound.c, image_scan.c), the
 * parts' tables (dm_relink_ops), options/.
 * Called by: hook_ctx.c.
 *
 * Locking: an atomic exchange elects the one caller that starts and joins
 * the thread; the thread's results go to relink/ahead.c's slots (atomic).
 */
#include "shim.h"

#include <pthread.h>
#include <signal.h>

#define AHEAD_FATBINS 64

static int g_started;
static pthread_t g_thread;
static int g_dev;

static void *read_ahead(void *arg) {
  (void)arg;
  double t0 = dm_clock_ms();
  const void *fb[AHEAD_FATBINS];
  size_t n = dm_exe_fatbins(fb, AHEAD_FATBINS), kept = 0;
  dm_tls_busy++; /* whatever the re-link calls is the shim's own driver work */
  for (size_t i = 0; i < n; i++) {
    size_t len;
    char why[256];
    const void *body = dm_image_bound(fb[i], &len);
    if (!body || dm_image_scan(body, len) == DM_HAS_YES) continue; /* the load will not re-link it */
    if (dm_relink_ops->read_ahead(body, len, g_dev, why, sizeof why))
      kept++;
    else
      dm_log(DM_LOG_DEBUG, "jit: not read ahead: %s", why);
  }
  dm_tls_busy--;
  if (n)
    dm_log(DM_LOG_INFO,
           "jit: %zu of the program's %zu fatbins read from the re-link cache while "
           "the context was created (%.2f ms)",
           kept, n, dm_clock_ms() - t0);
  return NULL;
}

int dm_jit_ahead_begin(CUdevice dev) {
  const dm_options_t *o = dm_options();
  if (!o->jit_ahead || o->jit == DM_JIT_OFF || __atomic_exchange_n(&g_started, 1, __ATOMIC_ACQ_REL)) return 0;
  g_dev = (int)dev;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int e = pthread_create(&g_thread, NULL, read_ahead, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return e == 0;
}

void dm_jit_ahead_end(void) { pthread_join(g_thread, NULL); }
