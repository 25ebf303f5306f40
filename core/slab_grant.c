/*
 * slab_grant.c — a small request's slots (slab.c has the design): the fast
 * path (dm_slab_grant_fast), the pins of the room search (dm_slab_pin_way,
 * dm_slab_room, dm_slab_pin_found) and dm_slab_grant, which goes on from
 * them through pins, grows and steals (slab_grow.c) until it has slots or the
 * heap has none of the class.
 *
 * Locking: none of its own; a way's lock inside a search of the way's list
 * (way_pin) and inside a grow. The fast path takes none.
 */
#include "dm_internal.h"
#include "chunk.h"

/* dm_slab_grant's common case, for a reservation just initialised: the
 * home bin's semaphore has the n units and no waiter (one fetch-add), its
 * hint chunk has room for them (one fetch-add) and a word of that chunk has
 * free bits (one fetch-or). Nothing here calls out of line, so that the
 * GPU's malloc keeps this path in few registers (docs/design.md, "Calling
 * convention"). Returns the slots it claimed (bits 0: none) and leaves in
 * *rv what dm_slab_grant goes on from: units to give back to rv->chunk,
 * units to pin, slots pinned and not yet claimed. Takes nothing for more
 * slots than a chunk holds: a 32-lane warp of the classes above 4 KiB needs
 * two chunks, and trying first slowed them (docs/decisions.md, "The fast
 * path's full hint, the re-list stack and the try-lock"). */
DM_HOT dm_grant_t dm_slab_grant_fast(dm_heap_t *h, dm_resv_t *rv, uint32_t n) {
  const dm_class_t *c = &h->classes[rv->cls];
  uint32_t cap = c->nslots;
  dm_bin_t *b = bin_at(h, rv->arena, rv->cls);
  dm_grant_t g;
  g.bits = 0;
  g.slots = 0;
  g.word = 0;
  g.size = c->size;
  if (n > cap || !dm_sem_take_fast(&b->sem, n, 1)) return g;
  rv->units = n;
  dm_way_t *w = bin_way(h, b, bin_way_index(h));
  uint32_t *own = slot_hint(h, rv->cls), hint = own ? dm_load32(own) : 0, before;
  if (!hint) {
    hint = dm_load32(&w->hint);
    if (own && hint) dm_store32(own, hint);
  }
  uint32_t tag = make_tag(rv->arena, rv->cls);
  if (!hint) return g;
  uint32_t t = chunk_pin(h, hint - 1, tag, cap, n, &before, &rv->drop);
  rv->chunk = hint;
  if (!t && !rv->drop) { /* the hint was full (nothing added): the chunk after it */
    uint32_t next = dm_load32(&h->chunks[hint - 1].next);
    if (next) {
      t = chunk_pin(h, next - 1, tag, cap, n, &before, &rv->drop);
      rv->chunk = next;
      if (t) dm_cas32(&w->hint, hint, next); /* the others of the way follow */
      uint32_t *mine = slot_hint(h, rv->cls);
      if (t && mine) dm_store32(mine, next);
    }
  }
  if (!t) return g;
  rv->cursor = before;
  rv->pinned = t;
  rv->units = n - t;
  return resv_claim(h, rv, n);
}

/* Chunk `c` (index+1) of the reservation's bin becomes the caller's slot
 * hint for its class, when the heap keeps them and the bin is the caller's
 * arena's (a request served by another arena's bin leaves it). */
static DM_INLINE void slot_hint_keep(dm_heap_t *h, const dm_resv_t *rv, uint32_t c) {
  uint32_t *own = slot_hint(h, rv->cls);
  if (own && rv->arena == dm_heap_arena(h)) dm_store32(own, c);
}

/* Give back what the reservation's last pin took beyond its chunk's room. */
static DM_INLINE void resv_give_back(dm_heap_t *h, dm_resv_t *rv) {
  if (rv->drop) {
    chunk_drop(h, rv->chunk - 1, rv->drop);
    rv->drop = 0;
  }
}

/* The caller's way, for a reservation that holds units and no pin (the
 * fast path's pins missed): its hint and the chunk after it; for the
 * classes below DM_HINT_CLASS_MIN also a search of its list (way_pin),
 * which moves the hint for the many warps a chunk of theirs serves; for the
 * larger classes that search, under the lock one warp after another, costs
 * more than it finds (docs/decisions.md, "Room search"). Returns 1 when it pinned; the
 * chunk becomes the caller's slot hint. A warp that finds no room there
 * searches the descriptors (devmalloc.cu, "Room search") before
 * dm_slab_grant tries the other ways. */
DM_FN int dm_slab_pin_way(dm_heap_t *h, dm_resv_t *rv) {
  resv_give_back(h, rv);
  if (!rv->units || rv->pinned) return 0;
  dm_way_t *w = bin_way(h, bin_at(h, rv->arena, rv->cls), bin_way_index(h));
  uint32_t tag = make_tag(rv->arena, rv->cls), cap = h->classes[rv->cls].nslots;
  if (rv->cls >= DM_HINT_CLASS_MIN) { /* the way's hint and the chunk after it */
    uint32_t hint = dm_load32(&w->hint);
    if (!way_pin_chain(h, w, rv, tag, cap, hint, hint, 0)) return 0;
  } else if (way_pin(h, w, rv, tag, cap) != 1) {
    return 0;
  }
  slot_hint_keep(h, rv, rv->chunk);
  return 1;
}

/* Free slots of chunk idx when it is bin `tag`'s (cap: the class's slots),
 * else 0: what a warp's search of the descriptors reads (devmalloc.cu,
 * "Room search"). */
DM_FN uint32_t dm_slab_room(const dm_heap_t *h, uint32_t idx, uint32_t tag, uint32_t cap) {
  uint64_t v = dm_load64(&h->chunks[idx].live);
  uint32_t used = live_used(v);
  return (uint32_t)(v >> 32) == tag && used < cap ? cap - used : 0;
}

/* Pin the reservation's units (all of them, or what fits) on chunk idx,
 * which a search found with room, after giving back what the fast path's
 * pin took beyond room; the chunk becomes the caller's slot hint. Returns 1
 * when it pinned (the room may be gone: then dm_slab_grant goes on as
 * usual). */
DM_FN int dm_slab_pin_found(dm_heap_t *h, dm_resv_t *rv, uint32_t idx) {
  resv_give_back(h, rv);
  if (!rv->units || rv->pinned) return 0;
  if (!resv_pin_at(h, rv, make_tag(rv->arena, rv->cls), h->classes[rv->cls].nslots, idx + 1)) return 0;
  slot_hint_keep(h, rv, idx + 1);
  return 1;
}

/* Grant 1..n slots (bits in one bitmap word), or bits == 0 when the heap has
 * no slot of this class left. Call again with the remaining count; a
 * reservation may come from dm_slab_grant_fast. */
DM_FN dm_grant_t dm_slab_grant(dm_heap_t *h, dm_resv_t *rv, uint32_t n) {
  dm_grant_t g;
  g.bits = 0;
  g.slots = 0;
  g.word = 0;
  g.size = h->classes[rv->cls].size;
  resv_give_back(h, rv);
  for (;;) {
    if (rv->pinned) return resv_claim(h, rv, n);
    if (rv->units) {
      resv_pin(h, rv);
      slot_hint_keep(h, rv, rv->chunk);
      continue;
    }
    if (rv->tries == 0) { /* stage one in the home arena */
      uint32_t cap = h->classes[rv->cls].nslots, m = n < cap ? n : cap;
      dm_bin_t *b = bin_at(h, rv->arena, rv->cls);
      if (!dm_load32(&b->held)) b = bin_share(h, rv, m, b);
      /* a grower that keeps most of its first chunk announces its run */
      uint32_t k = 2 * m > cap ? grow_run(h, b, cap, m) : 0, batch = k ? k * cap : cap;
      if (dm_sem_wait(&b->sem, m, batch) == DM_SEM_OK) {
        rv->units = m;
        continue;
      }
      if (resv_grow(h, rv, m, k, batch - m, &g)) {
        slot_hint_keep(h, rv, (uint32_t)((uint64_t)(g.slots - h->buddy.base) >> DM_CHUNK_SHIFT) + 1);
        return g;
      }
      rv->tries = 1;
    }
    if (!resv_steal(h, rv, n)) return g; /* out of memory */
  }
}
