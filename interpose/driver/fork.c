/*
 * fork.c — the shim's locks across fork().
 *
 * pthread_atfork handlers take every lock of the shim before the fork, in the
 * shim's one lock order (owner lock, context table, launch cache, graph
 * table; see bind.c) and release them after it in the parent; the child,
 * whose one thread has a new id, initializes them afresh (a writer's rwlock
 * cannot be unlocked there). A child so never inherits a lock that another thread of the parent
 * was holding (it would wait for it forever), nor a table half updated. The
 * host pool registers its own handlers (host/pool/pool_hooks.c): its locks
 * are never held together with these.
 *
 * Registered once (pthread_once) when the driver is first resolved, not in a
 * constructor.
 *
 * May call: the fork entry points of owners.c, ctxtab.c and graphs.c.
 * Called by: real.c (the driver's first use).
 *
 * Locking: the handlers themselves are the lock owners' fork entry points.
 */
#include "shim.h"

#include <pthread.h>

static void each(dm_fork_phase_t ph) {
  if (ph == DM_FORK_TAKE) {
    dm_owner_fork(ph);
    dm_ctx_fork(ph);
    dm_launch_cache_fork(ph);
    dm_graphs_fork(ph);
  } else {
    dm_graphs_fork(ph);
    dm_launch_cache_fork(ph);
    dm_ctx_fork(ph);
    dm_owner_fork(ph);
  }
}

static void prepare(void) { each(DM_FORK_TAKE); }
static void parent(void) { each(DM_FORK_PARENT); }
static void child(void) { each(DM_FORK_CHILD); }

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static void register_handlers(void) { pthread_atfork(prepare, parent, child); }

void dm_fork_register(void) { pthread_once(&g_once, register_handlers); }
