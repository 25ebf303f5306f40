/*
 * counters.c — the heap's counters, its footprint, and the arena of the
 * caller, for every part of the core.
 *
 * Counters: per arena, allocations and frees per class, large allocations,
 * frees and bytes (signed: a block may be freed from another arena), and
 * failures; per heap, double and foreign frees, and the footprint and its
 * peak (pool bytes held by slab chunks and large blocks; dm_heap_hold raises
 * it, dm_heap_unhold in dm_internal.h lowers it). A warp-level slab
 * operation updates one counter with one atomic add; bytes in use are
 * derived when the counters are read.
 *
 * Locking: none; every counter is one atomic add (the peak one atomic max).
 * Calls nothing in the core.
 */
#include "dm_internal.h"

DM_FN uint32_t dm_heap_arena(const dm_heap_t *h) { return dm_arena_hint(DM_ARENAS_PER_SM) % h->narenas; }

DM_FN void dm_heap_note_failure(dm_heap_t *h, uint32_t arena, uint32_t count) {
  dm_add64(&h->astats[arena].failures, count);
}

/* n misuses of one kind (a warp's fetch-and finds several slots free already). */
DM_FN void dm_heap_note_misuses(dm_heap_t *h, int why, uint32_t n) {
  dm_add64(why == DM_FREE_DOUBLE ? &h->hstats->double_frees : &h->hstats->foreign_frees, n);
}

DM_FN void dm_heap_note_misuse(dm_heap_t *h, int why) { dm_heap_note_misuses(h, why, 1); }

DM_FN void dm_heap_note_slab(dm_heap_t *h, uint32_t arena, uint32_t cls, uint32_t count) {
  dm_add64(&h->astats[arena].class_allocs[cls], count);
}

/* `bytes` of the pool are held from now (chunks or large blocks just
 * taken): the footprint counts them at once, and its peak follows. */
DM_FN void dm_heap_hold(dm_heap_t *h, uint64_t bytes) {
  dm_max64(&h->hstats->peak, dm_add64(&h->hstats->footprint, bytes) + bytes);
}

DM_FN void dm_heap_note_free(dm_heap_t *h, uint32_t arena, uint32_t cls, uint32_t count) {
  dm_add64(&h->astats[arena].class_frees[cls], count);
}
