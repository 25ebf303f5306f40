/*
 * slab.c — small blocks (the paper's UAlloc, with XMalloc/RW-BM search): the
 * design, below, and a chunk's format, pins and claims. The slab's other
 * files, in the order of calls: slab_grow.c (a bin's new chunks: grow, adopt,
 * steal, share), slab_grant.c (dm_slab_grant and its fast path), slab_free.c.
 *
 * Memory comes in 128 KiB chunks taken from the buddy tree. A chunk serves one
 * size class of one arena (an SM on the GPU); its slot bitmap lies beside it
 * in its descriptor (classes of 320 B and up) or at its start, and slots
 * follow from the class's offset (0 .. 1024, layout.c: dm_classes_compute;
 * chunk.h: chunk_bitmap). The chunk's descriptor (dm_chunk_t,
 * outside the pool, never freed) holds `live` = tag << 32 | used, where tag
 * names arena and class (0: not a slab chunk) and `used` counts slots claimed
 * or pinned.
 *
 * Allocation is two-stage, per request of n slots (n lanes of a warp on the
 * GPU, 1 on the host):
 *   1. accounting: wait on the bin's bulk semaphore (free slots of the arena's
 *      chunks of this class). GROW: take a chunk (or a run of adjacent
 *      chunks) from the buddy tree, or adopt an empty one another bin keeps,
 *      format it and keep n slots of it. If the tree is full, take units
 *      from other arenas' semaphores (stealing) so that memory is never
 *      stranded. A request of a few lanes for a small class whose bin holds
 *      no chunk does this on the bin of the first arena of its group
 *      instead, until that bin holds a few chunks (bin_share).
 *   2. tracking: pin units to a chunk (fetch-add on `live`; what does not fit
 *      under cap, or all of it when the tag does not match, is given back),
 *      then claim bits in its bitmap with one fetch-or per word, starting at
 *      the word the pin count points to (concurrent warps start at different
 *      words) and, when that word is full, at a pseudo-random word (RW-BM).
 * Free clears the bit (fetch-and: a bit already clear is a double free),
 * signals the semaphore, decrements `used`, queues a chunk that was full for
 * re-listing, and marks the heap when a chunk empties: empty chunks stay
 * with their bins until a reclaim pass (the tree cannot serve a request)
 * returns them to the buddy tree (try-wait of a whole chunk's units, then
 * CAS used 0 -> dead), so a heap whose blocks are all freed holds nothing
 * that a request cannot get back, or until a bin of any arena and class
 * adopts them (resv_adopt, once more than three quarters of the pool are held).
 *
 * Ways: a bin's chunks are spread over 1 to DM_BIN_WAYS ways (h->way_mask +
 * 1, layout.c: about the warp slots that share an arena), each with its own
 * list, hint, lock and re-list stack; the semaphore is the bin's. A warp
 * pins in its own way (chunk.h: bin_way_index) and, when that has no room,
 * in the others, since the units it took may lie in any of them (and then
 * starts its way's next warps there). A bin's grows give their chunks to
 * the ways in turn. With one list per bin every warp of an arena pinned on
 * one hint chunk, and most missed the fast path (docs/decisions.md, "Ways");
 * a way per warp slot group lets a bin fill that many chunks at once. Ways hold nothing
 * apart: a way's chunks are every way's to pin, so no slot is stranded.
 *
 * Slot hints: a heap with ways (and a pool of DM_HINT_POOL_MIN or more)
 * keeps a chunk hint per warp slot and class (h->shints; chunk.h:
 * slot_hint). The fast path pins there first (the way's hint while the slot
 * has none), the chunk after it when it is full, and a slow path's chunk
 * becomes the slot's hint: a kernel that runs again finds its slots where
 * the last run found them, instead of every warp of a way meeting on the
 * way's hint. Written and read without a lock; a stale one costs a failed
 * pin (tag and room are checked). Only the classes of 80 B and up keep them
 * (DM_HINT_CLASS_MIN): a chunk of the smaller ones serves 64 warps and more.
 *
 * Room search: on the GPU a warp whose fast pins missed while it holds
 * units of a bin with ways tries its way (dm_slab_pin_way: the way's hint
 * and the chunk after it; for the classes below DM_HINT_CLASS_MIN also a
 * search of the way's list), then reads the chunk descriptors with all its
 * lanes for one of the bin's chunks with room (devmalloc.cu; dm_slab_room)
 * and pins there (dm_slab_pin_found), before dm_slab_grant searches the
 * other ways one lock at a time. A found chunk is pinned like a hint: the
 * tag and room are checked by the pin, so a chunk that left the bin or
 * filled meanwhile costs a failed pin.
 *
 * Locking: a way's lock (spin) protects its list of non-full chunks and the
 * prev/next/listed/way fields of its chunks; it is taken when the way's hint
 * runs dry (a search, which first drains the way's re-list stack into the
 * list; only if the lock is free: the others pin from the stack, read
 * without the lock, or wait for the hint it sets), by
 * the reclaim pass (reclaim.c) for each chunk it returns and by a bin that
 * adopts an empty chunk of another (the old way's lock, to unlist it,
 * released before the new way's lock is taken to list it) — never per
 * allocation and never by a free. A bin's new chunks without slots taken
 * are formatted under their way's lock, so that no empty chunk is seen
 * outside a way's list (an empty chunk is taken only under its way's lock,
 * and only if listed it is unlisted). No path holds two way locks at once,
 * nor a way lock while it calls into the tree. A free whose decrement gives
 * a full chunk room again flags the chunk (DM_LIVE_PEND, by CAS, once) and
 * pushes it on its way's re-list stack (one exchange on `pending`; the link
 * is in the chunk): a lock per chunk that got room back was what bounded
 * the free rate of the classes of 1 KiB and up. A flagged chunk keeps its
 * tag (the release expects no flag). `hint` and `live` are read and updated
 * lock-free. A stale hint is harmless: pinning checks the tag, and a chunk
 * re-formatted for the same bin is a valid target.
 */
#include "dm_internal.h"
#include "chunk.h"

DM_FN uint32_t dm_chunk_class(const dm_heap_t *h, uint32_t chunk) {
  uint32_t tag = (uint32_t)(dm_load64(&h->chunks[chunk].live) >> 32);
  return tag ? tag_class(tag) : DM_NUM_CLASSES;
}

DM_FN void dm_resv_init(dm_resv_t *rv, uint32_t arena, uint32_t cls) {
  rv->arena = arena;
  rv->home = arena;
  rv->cls = cls;
  rv->units = rv->pinned = rv->chunk = rv->tries = rv->cursor = rv->drop = 0;
}

DM_FN char *dm_grant_slot(dm_grant_t g, int k) {
  uint64_t slot = ((uint64_t)g.word << 6) + (uint64_t)k;
  return g.slots + slot * g.size;
}

/* Lowest `k` set bits of x (binary search on the prefix width: six
 * popcounts, where peeling bits one by one took k dependent steps). */
static DM_INLINE uint64_t lowest_bits(uint64_t x, uint32_t k) {
  if ((uint32_t)dm_popc64(x) <= k) return x;
  if (k == 0) return 0;
  uint32_t lo = 0, hi = 64; /* popc of the lowest hi bits >= k > popc of the lowest lo */
  while (hi - lo > 1) {
    uint32_t mid = (lo + hi) / 2;
    if ((uint32_t)dm_popc64(x & ((1ull << mid) - 1u)) >= k)
      hi = mid;
    else
      lo = mid;
  }
  return x & (hi == 64 ? ~0ull : (1ull << hi) - 1u);
}

/* Format chunk `idx` for (arena, cls), listed by `way`, with its first
 * `take` free slots claimed by the caller; returns them as a grant. Only the class's own
 * bitmap words are written (a claim looks at no other word): the bits past
 * its slots are set: writing all 128 words, with a division per word, slowed
 * a first pass (docs/decisions.md, "Per-class slot offsets"). */
DM_PART_COLD dm_grant_t chunk_format(dm_heap_t *h, uint32_t idx, uint32_t arena, uint32_t cls, uint32_t way,
                                     uint32_t take) {
  const dm_class_t *c = &h->classes[cls];
  uint64_t *bm = chunk_bitmap(h, idx, cls);
  uint32_t words = dm_class_words(c);
  uint64_t mine = 0;
  for (uint32_t w = 0; w < words; w++) {
    uint64_t v = dm_class_pad(c, w);
    if (w == 0) { /* the caller's slots: the first `take` free ones */
      mine = lowest_bits(~v, take);
      DM_ASSERT((uint32_t)dm_popc64(mine) == take);
      v |= mine;
    }
    dm_store64(&bm[w], v);
  }
  dm_add32(&bin_at(h, arena, cls)->held, 1);
  dm_fence();
  /* live is 0 here, but for a stale pin's add in flight (chunk_pin) */
  dm_add64(&h->chunks[idx].live, ((uint64_t)make_tag(arena, cls) << 32) | (way << DM_LIVE_WAY_SHIFT) | take);
  dm_grant_t g;
  g.slots = chunk_base(h, idx) + c->off;
  g.word = 0;
  g.size = c->size;
  g.bits = mine;
  return g;
}

/* Pin up to `want` slots of chunk idx for tag. Returns the number pinned;
 * *before is the chunk's count before (a good place to look for free bits:
 * a chunk fills from low words up, so the count says where free bits start)
 * and *over what the add took beyond that, which the caller gives back
 * (chunk_drop). One fetch-add, then what does not fit (or all of it, when
 * the chunk went to another bin meanwhile) is given back: a CAS loop here
 * let one warp in hundreds win per round when a small heap's few arenas put
 * them all on one chunk. The load before the add skips a full hint without
 * touching it: classes whose chunk one warp fills (4 KiB: 32 slots) would
 * otherwise add and give back on nearly every pin. An add on a chunk back in
 * the tree or formatted for another bin is harmless: formatting adds to
 * `live` (never stores), the reclaim's CAS expects exactly its empty value,
 * and the give-back re-lists as above. */
DM_PART_INLINE uint32_t chunk_pin(dm_heap_t *h, uint32_t idx, uint32_t tag, uint32_t cap, uint32_t want,
                                  uint32_t *before, uint32_t *over) {
  uint64_t *live = &h->chunks[idx].live;
  uint64_t v = dm_load64(live);
  *over = 0;
  if ((uint32_t)(v >> 32) != tag || live_used(v) >= cap) return 0;
  uint64_t old = dm_add64(live, want);
  uint32_t used = live_used(old), t = 0;
  if ((uint32_t)(old >> 32) == tag && used < cap) t = cap - used < want ? cap - used : want;
  *over = want - t;
  *before = used;
  return t;
}

/* Way w's hint is full or stale: point it at the first chunk of the way's
 * list with room, dropping full ones from the list on the way. Returns the
 * new hint; 0 when no listed chunk has room; DM_RESCAN_BUSY when another
 * caller is rescanning (the way's lock is taken only if free: the warps of
 * a bin whose hint filled all came here at once and queued on the lock,
 * each to find the hint moved already; a 16 B allocation kernel in a 64 MiB
 * heap, 7 arenas, ran 25x slower than in 4 GiB). */
#define DM_RESCAN_BUSY 0xffffffffu
static DM_COLD uint32_t way_rescan(dm_heap_t *h, dm_way_t *w, uint32_t tag, uint32_t cap) {
  /* a way that lists nothing (one of several) is passed without its lock */
  if (h->way_mask && !dm_load32(&w->head) && !dm_load32(&w->pending)) return 0;
  if (!way_trylock(w)) return DM_RESCAN_BUSY;
  way_drain(h, w);
  uint32_t cur = ld(&w->head);
  while (cur) {
    uint64_t v = dm_load64(&h->chunks[cur - 1].live);
    uint32_t next = ld(&h->chunks[cur - 1].next);
    if ((uint32_t)(v >> 32) == tag && live_used(v) < cap) break;
    list_remove(h, w, cur - 1);
    cur = next;
  }
  dm_store32(&w->hint, cur);
  way_unlock(w);
  return cur;
}

/* Pin the reservation's units on chunk c (index+1) of tag's bin, as much
 * as it has room for. Returns 1 when it pinned. */
DM_PART_INLINE int resv_pin_at(dm_heap_t *h, dm_resv_t *rv, uint32_t tag, uint32_t cap, uint32_t c) {
  uint32_t before, over;
  uint32_t t = chunk_pin(h, c - 1, tag, cap, rv->units, &before, &over);
  if (over) chunk_drop(h, c - 1, over);
  if (!t) return 0;
  rv->cursor = before;
  rv->chunk = c;
  rv->pinned = t;
  rv->units -= t;
  return 1;
}

/* Pin the reservation's units on the first chunk with room of a chain of
 * way w that starts at chunk c (index+1): its list (`next` links, from the
 * hint) or its re-list stack (`pending` links: chunks that got room back
 * and wait for a search to list them), at most DM_PIN_WALK chunks, read
 * without the lock (a stale link is harmless: the pin checks tag and room;
 * a link not written yet ends the walk). A chunk other than the hint
 * becomes the hint: the others of the way follow. Returns 1 when it
 * pinned. */
DM_PART_INLINE int way_pin_chain(dm_heap_t *h, dm_way_t *w, dm_resv_t *rv, uint32_t tag, uint32_t cap,
                                 uint32_t c, uint32_t hint, int stack) {
  for (uint32_t step = 0; c && c != DM_LINK_UNSET && step < DM_PIN_WALK; step++) {
    if (resv_pin_at(h, rv, tag, cap, c)) {
      if (c != hint) dm_cas32(&w->hint, hint, c);
      return 1;
    }
    c = ld(stack ? &h->chunks[c - 1].pending : &h->chunks[c - 1].next);
  }
  return 0;
}

/* Move the reservation's units onto a chunk of way w: its hint and the
 * chunks after it in the way's list; beyond DM_PIN_WALK of them a search,
 * which drops the full chunks from the list, and again from the hint it set
 * while searches find one (no pause: the chunks of a 1 KiB bin fill 4 warps
 * at a time). While another caller searches, the way's re-list stack, whose
 * chunks have room, and again from the hint when that search set one
 * meanwhile: after a free kernel the chunks that searches dropped while full
 * are all there, and every warp of a way waited for the one search that
 * lists them (docs/decisions.md, "The fast path's full hint, the re-list
 * stack and the try-lock"). Returns 1 when it pinned, 0 when the way has
 * no chunk with room, DM_RESCAN_BUSY when another caller is searching it. */
DM_PART_INLINE uint32_t way_pin(dm_heap_t *h, dm_way_t *w, dm_resv_t *rv, uint32_t tag, uint32_t cap) {
  for (;;) {
    uint32_t hint = dm_load32(&w->hint);
    if (way_pin_chain(h, w, rv, tag, cap, hint, hint, 0)) return 1;
    uint32_t r = way_rescan(h, w, tag, cap);
    if (r == DM_RESCAN_BUSY) {
      if (way_pin_chain(h, w, rv, tag, cap, dm_load32(&w->pending), hint, 1)) return 1;
      if (dm_load32(&w->hint) != hint) continue; /* that search is done */
    }
    if (r == 0 || r == DM_RESCAN_BUSY) return r;
  }
}

/* The caller's way had no room: move the reservation's units onto a chunk
 * of another way of bin b (the units are the bin's: they may lie in any
 * way's chunks), and make that chunk the caller's way's hint too, so that
 * the way's next warps start there (a hint is only where to try first).
 * Out of line: the common path keeps its few registers. Returns 1 when it
 * pinned. */
static DM_COLD int resv_pin_other(dm_heap_t *h, dm_resv_t *rv) {
  dm_bin_t *b = bin_at(h, rv->arena, rv->cls);
  uint32_t tag = make_tag(rv->arena, rv->cls), cap = h->classes[rv->cls].nslots;
  uint32_t at = bin_way_index(h);
  dm_way_t *mine = bin_way(h, b, at);
  uint32_t seen = dm_load32(&mine->hint);
  for (uint32_t i = 1; i <= h->way_mask; i++) {
    dm_way_t *w = bin_way(h, b, (at + i) & h->way_mask);
    if (way_pin(h, w, rv, tag, cap) == 1) { /* a way being searched was tried from its stack */
      dm_cas32(&mine->hint, seen, rv->chunk);
      return 1;
    }
  }
  return 0;
}

/* Move the reservation's units onto a chunk of its bin: the caller's way
 * first (way_pin), then, with several ways, the others. */
DM_PART_INLINE void resv_pin(dm_heap_t *h, dm_resv_t *rv) {
  uint32_t tag = make_tag(rv->arena, rv->cls), cap = h->classes[rv->cls].nslots;
  dm_way_t *w = bin_way(h, bin_at(h, rv->arena, rv->cls), bin_way_index(h));
  for (;;) {
    if (way_pin(h, w, rv, tag, cap) == 1) return;
    if (h->way_mask && resv_pin_other(h, rv)) return;
    /* none: another caller searches the way, or a free is about to
     * re-list a chunk */
    dm_pause();
  }
}

/* Claim up to min(n, pinned) slots of the pinned chunk from one word. */
DM_PART_INLINE dm_grant_t resv_claim(dm_heap_t *h, dm_resv_t *rv, uint32_t n) {
  const dm_class_t *c = &h->classes[rv->cls];
  uint32_t idx = rv->chunk - 1, words = dm_class_words(c);
  uint64_t *bm = chunk_bitmap(h, idx, rv->cls);
  uint32_t want = n < rv->pinned ? n : rv->pinned;
  /* Start where the pin count points: warps that pinned at once start at
   * different words, and a chunk filling up is searched from its frontier. */
  uint32_t w = (rv->cursor >> 6) % words;
  rv->cursor += want;
  int jumped = 0;
  dm_grant_t g;
  g.slots = chunk_base(h, idx) + c->off;
  g.size = c->size;
  for (;;) {
    uint64_t v = dm_load64(&bm[w]);
    if (~v) {
      uint64_t mask = lowest_bits(~v, want);
      uint64_t got = mask & ~dm_or64(&bm[w], mask);
      if (got) {
        rv->pinned -= (uint32_t)dm_popc64(got);
        g.word = w;
        g.bits = got;
        return g;
      }
      continue; /* lost a race on this word: look again */
    }
    /* The frontier word is full (frees left holes elsewhere): jump to a
     * pseudo-random word (RW-BM), then walk on from there. */
    w = jumped ? (w + 1 == words ? 0 : w + 1) : dm_rand() % words;
    jumped = 1;
  }
}
