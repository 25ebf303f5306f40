/*
 * heap_ops.c — the only file that names the host runtime's API
 * (include/devmalloc.h). The rest of the shim calls it through dm_heap_ops so
 * host tests can substitute a fake runtime.
 *
 * Locking: none (a const table).
 */
#include "shim.h"

static const dm_heap_ops_t g_ops = {
  devmalloc_heap_create, devmalloc_heap_bind_module, devmalloc_heap_bind_library,
  devmalloc_heap_stats,  devmalloc_heap_destroy,     devmalloc_status_string,
  devmalloc_stats_print, devmalloc_heap_set_min_block, devmalloc_heap_set_check,
  devmalloc_heap_create_growing, devmalloc_heap_trim_start, devmalloc_heap_grows,
  devmalloc_heap_abandon,
};
const dm_heap_ops_t *dm_heap_ops = &g_ops;
