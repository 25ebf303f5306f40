/*
 * real.c — the real driver entry points behind the hooks, and the driver's
 * first use.
 *
 * dm_real(id) answers the real function of hook `id`: the one met first
 * through dlsym or cuGetProcAddress (dlsym.c and hooks.c offer it), else the
 * one libcuda exports under the hook's exact name (dm_driver_sym). The names
 * come from hooks.def directly, so this file never names the hook table or a
 * wrapper: whoever offers a pointer makes sure it is not one of our wrappers
 * (dm_hook_by_ptr), and libcuda's own scope, the only one dm_driver_sym
 * searches, never holds the shim.
 *
 * First use: the first dm_driver_sym (the first hook whose real entry point
 * is not known yet, or the re-link's resolver) registers the fork handlers
 * (fork.c), gives the context table its way to the real entry points
 * (ctxtab.c) and the trace its way to the context table's counters
 * (trace.c's sampler: ctxtab.c's dm_ctx_sample), opens libcuda (driver.c)
 * and connects the other parts to it (parts.c). This is the one place that
 * wires the layers below together: they receive what they need from above
 * as arguments or through setters, never by naming this file.
 *
 * May call: fork.c, ctxtab.c (its setter, its sampler), trace.c (its setter),
 * parts.c, driver.c, real_dlsym.c.
 * Called by: the hook handlers (hook_*.c), hooks.c, dlsym.c.
 *
 * Locking: real pointers are atomics written once (first writer wins); the
 * first use runs once (pthread_once), and the handle is written only there.
 */
#include "shim.h"
#include "obs.h"

#include <pthread.h>
#include <stdatomic.h>

static _Atomic(void *) g_real[DM_NUM_HOOKS];

/* The exact driver symbol of each hook (hooks.def). */
static const char *const g_sym[DM_NUM_HOOKS] = {
#define DM_HOOK(sym, base, ptds, since, handler, params, args) [DM_ID_##sym] = #sym,
#include "hooks.def"
#undef DM_HOOK
};

void dm_real_offer(dm_hook_id_t id, void *real) {
  if (!real || (int)id < 0 || id >= DM_NUM_HOOKS) return;
  void *expected = NULL;
  atomic_compare_exchange_strong(&g_real[id], &expected, real);
}

void *dm_real(dm_hook_id_t id) {
  void *p = atomic_load_explicit(&g_real[id], memory_order_acquire);
  if (p) return p;
  dm_real_offer(id, dm_driver_sym(g_sym[id]));
  return atomic_load_explicit(&g_real[id], memory_order_acquire);
}

/* --- the driver's first use ------------------------------------------------ */
static void *g_handle;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void first_use(void) {
  dm_fork_register();
  dm_ctx_set_real(dm_real);
  dm_trace_set_sampler(dm_ctx_sample); /* before any heap exists to sample */
  g_handle = dm_driver_open();
  if (g_handle) dm_parts_connect(g_handle, dm_driver_sym, dm_real);
}

int dm_driver_init(void) {
  dm_driver_mark_used();
  pthread_once(&g_once, first_use);
  return g_handle ? 0 : -1;
}

void *dm_driver_sym(const char *sym) {
  if (dm_driver_init()) return NULL;
  return dm_real_dlsym(g_handle, sym);
}
