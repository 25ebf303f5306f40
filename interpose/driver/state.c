/*
 * state.c — process-wide switches read on every hook: the reentrancy flag of
 * the calling thread and the "some image may hold devmalloc" flag.
 *
 * May call: options/.
 *
 * Locking: a thread-local int and one atomic flag (set once, never cleared).
 */
#include "shim.h"

#include <stdatomic.h>

__thread int dm_tls_busy;
static atomic_int g_candidates;

int dm_passthrough(void) { return dm_tls_busy || dm_options()->disable; }

void dm_candidates_set(void) { atomic_store_explicit(&g_candidates, 1, memory_order_release); }

int dm_candidates(void) { return atomic_load_explicit(&g_candidates, memory_order_acquire); }
