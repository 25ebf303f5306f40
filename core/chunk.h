/*
 * chunk.h — slab chunks and their bins, as slab.c and reclaim.c both see
 * them: the bin of (arena, class) and its ways, the tag in a chunk's `live`
 * word, where a chunk and its bitmap lie, a way's spin lock, its list of
 * non-full chunks and its re-list stack (slab.c's header comment has the
 * rules).
 *
 * Locking: way_lock (or way_trylock)/way_unlock; the list functions and
 * way_drain need the way's lock held; chunk_unbin takes the lock of the
 * chunk's way (only that one); way_push is lock-free (one exchange), and
 * way_drain waits for a push's link only while that push, which holds
 * nothing, writes it.
 */
#ifndef DM_CHUNK_H
#define DM_CHUNK_H

#include "dm_internal.h"

static DM_INLINE dm_bin_t *bin_at(dm_heap_t *h, uint32_t arena, uint32_t cls) {
  return &h->bins[arena * DM_NUM_CLASSES + cls];
}
/* A chunk's tag: 1 + class + arena * 32, so the class is the low 5 bits of
 * tag - 1 (DM_NUM_CLASSES <= 32) and no tag is 0 (0: not a slab chunk). */
static DM_INLINE uint32_t make_tag(uint32_t arena, uint32_t cls) { return 1u + cls + (arena << 5); }
static DM_INLINE uint32_t tag_class(uint32_t tag) { return (tag - 1u) & 31u; }
static DM_INLINE uint32_t tag_arena(uint32_t tag) { return (tag - 1u) >> 5; }
static DM_INLINE char *chunk_base(const dm_heap_t *h, uint32_t idx) {
  return h->buddy.base + ((uint64_t)idx << DM_CHUNK_SHIFT);
}
/* Chunk idx's slot bitmap, for class cls: beside the chunk, in its
 * descriptor (DM_SIDE_WORDS words), for the classes from DM_SIDE_CLASS
 * (320 B and up: at most 409 slots), whose first slot is then the chunk's
 * first byte; else at the chunk's start, below the first slot. The classes
 * beside keep all their slots: 128 of 1 KiB, 64 of 2 KiB, 32 of 4 KiB, 16
 * of 8 KiB, a whole number of 32-lane warps, where a bitmap at the chunk's
 * start took one slot, every chunk's last warp spilled a lane into another
 * chunk, and a 4 KiB warp never fitted one chunk (layout.c:
 * dm_classes_compute). The 256 B class would fit too (512 slots), but its
 * allocation ran slower so, and it keeps its bitmap in the chunk (511 slots;
 * docs/decisions.md, "Slot bitmaps in the chunk descriptor"). Decided by the
 * class index (a free has it from the tag) and found from the descriptors,
 * which a free reads anyway: a load of the class's offset, or an array of
 * its own, grew free's frame by 8 bytes on sm_90. */
static DM_INLINE uint64_t *chunk_bitmap(const dm_heap_t *h, uint32_t idx, uint32_t cls) {
  return dm_class_beside(cls) ? h->chunks[idx].bits : (uint64_t *)chunk_base(h, idx);
}
/* The caller's way of a bin: the arena hint's quotient by the arena count
 * (its remainder picks the arena), so that the warps sharing an arena
 * spread over the ways (slab.c, "Ways"). */
static DM_INLINE uint32_t bin_way_index(const dm_heap_t *h) {
  return h->way_mask ? (dm_arena_hint(DM_ARENAS_PER_SM) / h->narenas) & h->way_mask : 0;
}
/* The caller's warp slot's chunk hint for class cls (NULL: the heap keeps none; slab.c, "Slot hints"). */
static DM_INLINE uint32_t *slot_hint(const dm_heap_t *h, uint32_t cls) {
  return h->shints && cls >= DM_HINT_CLASS_MIN
             ? &h->shints[(dm_arena_hint(DM_ARENAS_PER_SM) % DM_HINT_SLOTS) * DM_NUM_CLASSES + cls]
             : 0;
}
/* Way i of bin b (i <= way_mask). */
static DM_INLINE dm_way_t *bin_way(const dm_heap_t *h, dm_bin_t *b, uint32_t i) {
  return i ? &h->ways[(uint64_t)(b - h->bins) * h->way_mask + i - 1u] : &b->way0;
}
/* Slots claimed or pinned, from a `live` word (without the flag). */
static DM_INLINE uint32_t live_used(uint64_t v) { return (uint32_t)v & DM_LIVE_USED; }
/* The way that lists the chunk, from a `live` word. */
static DM_INLINE uint32_t live_way(uint64_t v) {
  return ((uint32_t)v >> DM_LIVE_WAY_SHIFT) & (DM_BIN_WAYS - 1u);
}

static DM_INLINE void way_lock(dm_way_t *w) {
  while (dm_cas32(&w->lock, 0u, 1u) != 0u) dm_pause();
  dm_fence();
}
/* The way's lock if it is free now (1), else nothing (0). */
static DM_INLINE int way_trylock(dm_way_t *w) {
  if (dm_load32(&w->lock) != 0u || dm_cas32(&w->lock, 0u, 1u) != 0u) return 0;
  dm_fence();
  return 1;
}
static DM_INLINE void way_unlock(dm_way_t *w) {
  dm_fence();
  dm_store32(&w->lock, 0u);
  DM_CHAOS_POINT();
}

/* A way's list of non-full chunks; caller holds the way's lock. The fields
 * are read and written through the platform's coherent accessors: on the
 * GPU a plain load may be served from a non-coherent L1 line that another
 * SM changed under the same lock. */
static DM_INLINE uint32_t ld(const uint32_t *p) { return dm_load32(p); }
static DM_INLINE void st(uint32_t *p, uint32_t v) { dm_store32(p, v); }

static DM_INLINE void list_insert(dm_heap_t *h, dm_way_t *w, uint32_t idx) {
  dm_chunk_t *c = &h->chunks[idx];
  uint32_t head = ld(&w->head);
  st(&c->prev, 0);
  st(&c->next, head);
  if (head) st(&h->chunks[head - 1].prev, idx + 1);
  st(&w->head, idx + 1);
  st(&c->listed, 1);
}
static DM_INLINE void list_remove(dm_heap_t *h, dm_way_t *w, uint32_t idx) {
  dm_chunk_t *c = &h->chunks[idx];
  uint32_t prev = ld(&c->prev), next = ld(&c->next);
  if (prev)
    st(&h->chunks[prev - 1].next, next);
  else
    st(&w->head, next);
  if (next) st(&h->chunks[next - 1].prev, prev);
  st(&c->prev, 0);
  st(&c->next, 0);
  st(&c->listed, 0);
}

/* A pushed chunk's link to the next one on the stack, until its push has
 * written it. */
#define DM_LINK_UNSET 0xffffffffu

/* Put chunk idx (its `live` carries DM_LIVE_PEND, set by the caller) on its
 * way's re-list stack: one exchange on the way's word, no retry and no lock
 * (a CAS loop there had every warp of a bin that freed into full chunks
 * retrying against the others). The link is written after the exchange;
 * until then it reads DM_LINK_UNSET and a drain waits for it. */
static DM_INLINE void way_push(dm_heap_t *h, dm_way_t *w, uint32_t idx) {
  /* device scope: only the device reads the links, and a free that gives
   * a full chunk room runs this */
  dm_store32_device(&h->chunks[idx].pending, DM_LINK_UNSET);
  /* the mark before the chunk is reachable: a release exchange (a fence
   * here, MEMBAR.SC + CCTL.IVALL on sm_90, stalls the free that re-lists) */
  dm_store32_device(&h->chunks[idx].pending, dm_exch32_release(&w->pending, idx + 1));
}

/* Take the way's whole re-list stack and list its chunks (caller holds the
 * way's lock). Each chunk's flag is cleared after its link was read: from
 * then on a free may push it again. A chunk keeps its tag while flagged (a
 * release expects no flag), so every chunk here is still the bin's. A link
 * not written yet belongs to a push between its exchange and its store,
 * which holds nothing: the wait is short. */
static DM_INLINE void way_drain(dm_heap_t *h, dm_way_t *w) {
  if (!dm_load32(&w->pending)) return;
  uint32_t p = dm_exch32(&w->pending, 0);
  dm_fence(); /* the links written before each push */
  while (p) {
    dm_chunk_t *c = &h->chunks[p - 1];
    uint32_t next;
    while ((next = ld(&c->pending)) == DM_LINK_UNSET) dm_pause();
    dm_fence(); /* the link read before the flag is cleared */
    dm_and64(&c->live, ~(uint64_t)DM_LIVE_PEND);
    if (!ld(&c->listed)) list_insert(h, w, p - 1);
    p = next;
  }
}

/* Take empty chunk idx out of the bin of `tag` (its `live` goes from exactly
 * tag << 32 to 0): a whole chunk's units from the bin's semaphore
 * (try-wait), then under the lock of the chunk's way, with its re-list
 * stack drained first (a flagged chunk is never taken: its flag is cleared
 * there), the CAS, the unlisting and the hint. The CAS expects the way
 * whose lock is held: a chunk taken and given to the same bin meanwhile,
 * now another way's, stays. Returns 1 when the chunk is out (the caller
 * owns its memory: back to the tree, or formatted for another bin); 0 when
 * it is in use or its units are taken (nothing changed). Takes this one way
 * lock and no other. */
static DM_INLINE int chunk_unbin(dm_heap_t *h, uint32_t idx, uint32_t tag) {
  dm_bin_t *b = bin_at(h, tag_arena(tag), tag_class(tag));
  uint32_t cap = h->classes[tag_class(tag)].nslots, way = live_way(dm_load64(&h->chunks[idx].live));
  uint64_t empty = (uint64_t)tag << 32 | (uint64_t)way << DM_LIVE_WAY_SHIFT;
  if (!dm_sem_try_wait(&b->sem, cap)) return 0;
  dm_way_t *w = bin_way(h, b, way & h->way_mask);
  way_lock(w);
  way_drain(h, w);
  int out = dm_cas64(&h->chunks[idx].live, empty, 0) == empty;
  if (out) {
    if (dm_add32(&b->held, (uint32_t)-1) == 1) dm_store32(&b->grows, 0); /* runs start again (slab_grow.c) */
    if (ld(&h->chunks[idx].listed)) list_remove(h, w, idx);
    if (dm_load32(&w->hint) == idx + 1) dm_store32(&w->hint, ld(&w->head));
  }
  way_unlock(w);
  if (!out) dm_sem_signal(&b->sem, cap, 0);
  return out;
}

/* Chunk idx of `tag` has room again: flag it (once) and push it on its bin's
 * re-list stack, so that a search lists it. v: `live` as the caller's update
 * left it (the CAS fails if it moved since). Nothing when the chunk left the
 * bin meanwhile (emptied and returned: the tag differs) or is flagged
 * already (on the stack, not drained yet: the drain lists it). */
static DM_INLINE void chunk_relist(dm_heap_t *h, uint32_t idx, uint32_t tag, uint64_t v) {
  uint64_t *live = &h->chunks[idx].live;
  for (;;) {
    if ((uint32_t)(v >> 32) != tag || ((uint32_t)v & DM_LIVE_PEND)) return;
    uint64_t old = dm_cas64(live, v, v | DM_LIVE_PEND);
    if (old == v) break;
    v = old;
  }
  way_push(h, bin_way(h, bin_at(h, tag_arena(tag), tag_class(tag)), live_way(v) & h->way_mask), idx);
}

/* Lower chunk idx's `used` by n: slots freed, or units a pin added and gives
 * back. `used` only ever moves by atomic adds, and may pass `cap` for a
 * moment (a pin adds what it wants before it knows what fits), so the
 * decrement that takes it from >= cap to below re-lists the chunk (a search
 * may have dropped it from the list while it looked full), and the one that
 * takes it to 0 marks the heap for the reclaim pass. */
static DM_INLINE void chunk_drop_rest(dm_heap_t *h, uint32_t idx, uint32_t n, uint64_t old) {
  uint32_t tag = (uint32_t)(old >> 32), used = live_used(old);
  if (!tag) return; /* a pin's add on a chunk that went back to the tree, undone */
  uint32_t cap = h->classes[tag_class(tag)].nslots;
  if (used >= cap && used - n < cap) chunk_relist(h, idx, tag, old - n);
  if (used == n && !dm_load64_device(&h->hstats->cached)) dm_store64(&h->hstats->cached, 1);
}
static DM_INLINE void chunk_drop(dm_heap_t *h, uint32_t idx, uint32_t n) {
  chunk_drop_rest(h, idx, n, dm_add64(&h->chunks[idx].live, (uint64_t)0 - n));
}

#endif /* DM_CHUNK_H */
