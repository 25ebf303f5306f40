/*
 * slab.c — small blocks (the paper's UAlloc, with XMalloc/RW-BM search).
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
 * adopts them (resv_adopt, once more than half the pool is held).
 *
 * Ways: a bin's chunks are spread over 1 to DM_BIN_WAYS ways (h->way_mask +
 * 1, layout.c: about the warp slots that share an arena), each with its own
 * list, hint, lock and re-list stack; the semaphore is the bin's. A warp
 * pins in its own way (chunk.h: bin_way_index) and, when that has no room,
 * in the others, since the units it took may lie in any of them (and then
 * starts its way's next warps there). A bin's grows give their chunks to
 * the ways in turn. In a 64 MiB heap, 7
 * arenas, every warp of an arena pinned on one hint chunk: a 1 KiB chunk
 * serves 4 warps, so a bin's 146 warps passed its 36 chunks one after the
 * other and 2 warps in 3 missed the fast path (ncu, H200); a way per warp
 * slot group lets a bin fill that many chunks at once. Ways hold nothing
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
 * its slots are set. Writing all 128 words, with a division per word, was
 * a fifth of a 1 KiB first pass (ncu, H200). */
static DM_COLD dm_grant_t chunk_format(dm_heap_t *h, uint32_t idx, uint32_t arena, uint32_t cls, uint32_t way,
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
static DM_INLINE uint32_t chunk_pin(dm_heap_t *h, uint32_t idx, uint32_t tag, uint32_t cap, uint32_t want,
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
static DM_INLINE int resv_pin_at(dm_heap_t *h, dm_resv_t *rv, uint32_t tag, uint32_t cap, uint32_t c) {
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
static DM_INLINE int way_pin_chain(dm_heap_t *h, dm_way_t *w, dm_resv_t *rv, uint32_t tag, uint32_t cap,
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
 * lists them (2,400 busy searches for 1,024 warps of 1 KiB in a 64 MiB heap,
 * 7 arenas of 8 ways, H100). Returns 1 when it pinned, 0 when the way has
 * no chunk with room, DM_RESCAN_BUSY when another caller is searching it. */
static DM_INLINE uint32_t way_pin(dm_heap_t *h, dm_way_t *w, dm_resv_t *rv, uint32_t tag, uint32_t cap) {
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
static DM_INLINE void resv_pin(dm_heap_t *h, dm_resv_t *rv) {
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
static DM_INLINE dm_grant_t resv_claim(dm_heap_t *h, dm_resv_t *rv, uint32_t n) {
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

/* List chunks idx[0 .. k-1] in bin b of (arena, cls) and signal their
 * units, retiring the `expected` ones the caller's grow announced: the first
 * was formatted with n > 0 slots kept by the caller; the
 * others are formatted here, under their way's lock. Chunks j, j + ways,
 * ... go to way `way` + j, one lock per way, and chunk j becomes that way's
 * hint. An empty
 * chunk of a bin is taken (by a reclaim pass or a bin adopting it,
 * chunk_unbin) under its way's lock: formatted before the lock, an extra
 * chunk of a run was empty and not yet listed, was taken, and was then
 * listed anyway, in two bins' lists at once; their lists broke, the bins'
 * units pointed at no chunk, and the warps waiting for them spun for good
 * (H200, mixed sizes after larger ones, most runs of the GPU suite). */
static DM_INLINE void bin_add_chunks(dm_heap_t *h, dm_bin_t *b, uint32_t arena, uint32_t cls, uint32_t way,
                                     const uint32_t *idx, uint32_t k, uint32_t n, uint32_t cap,
                                     uint32_t expected) {
  uint32_t ways = h->way_mask + 1, used = k < ways ? k : ways;
  for (uint32_t j = 0; j < used; j++) { /* way + j: chunks j, j + ways, ..., one lock */
    uint32_t wi = (way + j) & h->way_mask;
    dm_way_t *w = bin_way(h, b, wi);
    way_lock(w);
    for (uint32_t i = j + (k - 1 - j) / ways * ways;; i -= ways) {
      if (i) chunk_format(h, idx[i], arena, cls, wi, 0);
      if (i || n < cap) list_insert(h, w, idx[i]);
      if (i < ways) break;
    }
    dm_store32(&w->hint, idx[j] + 1);
    way_unlock(w);
  }
  dm_sem_signal(&b->sem, k * cap - n, expected);
}

/* Adopt up to k empty chunks that other bins keep (any arena, any class) for
 * the home bin, keeping n slots of the first: look at the next DM_ADOPT_SCAN
 * chunks from a shared cursor (each grow its own range) for ones whose count
 * is 0, and take each the way a reclaim pass releases one (chunk_unbin: its
 * bin's units, then under its way's lock, the only way lock held, the CAS of
 * `live` from exactly tag << 32 to 0); then format them for the home bin and
 * list them. The footprint does not change: the chunks stay held, with no
 * tree operation. Returns 1 with *g set, 0 when the range held no empty
 * chunk. */
static DM_COLD int resv_adopt(dm_heap_t *h, dm_resv_t *rv, uint32_t n, uint32_t k, uint32_t way,
                              uint32_t expected, dm_grant_t *g) {
  uint64_t nchunks = dm_reclaim_span(h);
  if (!nchunks) return 0;
  uint32_t idx[1u << DM_GROW_RUN_LOG2], got = 0;
  uint64_t start = dm_add64(&h->hstats->adopt_next, DM_ADOPT_SCAN) % nchunks;
  for (uint64_t j = 0; j < DM_ADOPT_SCAN && j < nchunks && got < k; j++) {
    uint32_t c = (uint32_t)((start + j) % nchunks);
    uint64_t v = dm_load64(&h->chunks[c].live);
    uint32_t tag = (uint32_t)(v >> 32);
    if (!tag || live_used(v)) continue;    /* in the tree, or in use; unbin drains a re-list flag */
    if (!chunk_unbin(h, c, tag)) continue; /* in use again, or soon (its units are taken) */
    idx[got++] = c;
  }
  if (!got) return 0;
  *g = chunk_format(h, idx[0], rv->arena, rv->cls, way, n);
  bin_add_chunks(h, bin_at(h, rv->arena, rv->cls), rv->arena, rv->cls, way, idx, got, n,
                 h->classes[rv->cls].nslots, expected);
  return 1;
}

/* The run of a bin's grow after `grows` grows: 1, 2, 4, then 8 chunks
 * (2^min(grows, DM_GROW_RUN_LOG2); resv_grow says why). A bin that comes to
 * hold no chunk (they went back to the tree or to other bins) starts again
 * at one (chunk_unbin sets its grows to 0): counting every grow, every bin
 * that had grown in an earlier workload took 8 chunks at its first need in
 * the next, and after the power-of-four fills the mixed fill's 16 B, 64 B,
 * 256 B and 1 KiB bins held 16 .. 72 chunks in 2 .. 9 arenas with a few
 * slots used in each (H200). Counting the chunks held instead of the grows
 * made a fresh 4 GiB heap's mixed alloc 0.51x and 4 KiB alloc 0.77x: bins
 * that many warps grow at once took one chunk each, since none of their
 * runs was formatted yet. */
static DM_INLINE uint32_t grow_run_rule(uint32_t grows) {
  return 1u << (grows < DM_GROW_RUN_LOG2 ? grows : DM_GROW_RUN_LOG2);
}

/* More than half the pool held: bins grow one chunk at a time, adopting
 * empty chunks first (resv_grow). */
static DM_INLINE int past_half(const dm_heap_t *h) {
  return dm_load64(&h->hstats->footprint) > h->buddy.pool_bytes / 2;
}

/* Take chunks for the home bin, keeping n slots of the first: a fixed
 * heap's fresh chunks while there are any (fresh.c: one fetch-add for the
 * run), chunk-sized blocks the block cache keeps, then the tree. A bin that keeps growing
 * takes runs of 2, 4, then 8 chunks (from the tree, adjacent ones in one
 * operation; one chunk when no run is free): the tree's rate of operations
 * was what bounded allocation of the larger classes. Runs stop once half the
 * pool is held: with thousands of bins (arenas x classes) growing at once
 * they would take more than the requests need. (Runs that shrank with the
 * free share instead, 4 down to a quarter and 2 down to an eighth, made a
 * fresh 4 GiB heap's 2 KiB, 3000 B and 4 KiB alloc rows 3-4x slower and
 * mixed utilization 2 points lower, H200.)
 * Beyond half, when chunks emptied since the last reclaim pass (the heap's
 * mark), a bin first adopts empty chunks that other bins keep
 * (resv_adopt): after one workload freed its blocks, the chunks its bins
 * kept held half the pool, and the next workload's bins took their chunks
 * one per tree operation and then through reclaim passes that returned
 * thousands of chunks to the tree one by one (1 KiB allocation after the
 * smaller sizes in one process ran 7x slower than on a fresh heap, H200).
 * It adopts its run, but at most one chunk per way: one at a time, a
 * 64 MiB heap's 256 B bins (7 arenas of 8 ways) held just the chunks a pass
 * needs, every pass filled them to the last slots, and warps searched the
 * other ways for them; with a chunk per way that row ran 1.37x faster, the
 * 4 GiB heap's (one way per bin) unchanged (H200). Larger runs of adopted
 * chunks (up to the bin's run of 4) made the 4 GiB 2 and 4 KiB rows 0.87x
 * and 0.71x in the bench's order (H100).
 * k: the run the caller announced to the semaphore (grow_run), 0: decided
 * here; `expected`: the units its wait announced, retired by the signal. */
static DM_COLD int resv_grow(dm_heap_t *h, dm_resv_t *rv, uint32_t n, uint32_t k, uint32_t expected,
                             dm_grant_t *g) {
  dm_bin_t *b = bin_at(h, rv->arena, rv->cls);
  uint32_t cap = h->classes[rv->cls].nslots;
  uint32_t idx[1u << DM_GROW_RUN_LOG2], got = 0, grows = dm_add32(&b->grows, 1);
  uint32_t way = grows & h->way_mask; /* the bin's grows take the ways in turn */
  if (!k) k = grow_run_rule(grows);
  if (past_half(h)) { /* empty chunks that bins keep, up to one per way; the tree one at a time */
    uint32_t run = k < h->way_mask + 1 ? k : h->way_mask + 1;
    k = 1;
    if (dm_load64(&h->hstats->cached) && resv_adopt(h, rv, n, run, way, expected, g)) return 1;
  }
  if (!(got = dm_tree_take_chunks(h, k, idx))) {
    dm_sem_signal(&b->sem, 0, expected);
    return 0;
  }
  *g = chunk_format(h, idx[0], rv->arena, rv->cls, way, n);
  bin_add_chunks(h, b, rv->arena, rv->cls, way, idx, got, n, cap, expected);
  return 1;
}

/* The run a bin's next grow takes (grow_run_rule, one beyond half the pool),
 * no more than the semaphore can expect at once. A grower that keeps more
 * than half of its first chunk decides the run before its wait, which then
 * counts the whole run as expected units: requests arriving meanwhile wait
 * for the run instead of growing themselves. When only the first chunk was
 * expected (nothing, for a 4 KiB request: the whole chunk), every
 * 4 KiB warp grew on its own, took a run of 8 chunks, ran the tree dry, and
 * a fresh heap's first 4 KiB pass spent 12-22 ms in the tree's semaphores;
 * 1.1 ms with this (H200; the passes after it 0.25 -> 0.65 ms: the bins no
 * longer keep the surplus of those runs). Deciding every grower's run before
 * its wait made mixed-size utilization 79% -> 56% (a run decided before a
 * long wait is stale), so the others decide at the grow. */
static DM_INLINE uint32_t grow_run(const dm_heap_t *h, dm_bin_t *b, uint32_t cap, uint32_t n) {
  uint32_t k = grow_run_rule(dm_load32(&b->grows));
  if (past_half(h)) return 1;
  while (k > 1 && k * cap - n > DM_SEM_EXPECT_MAX) k >>= 1;
  return k;
}

/* The tree is full: take free slots that other arenas hold. Returns the
 * units taken (0: none anywhere). When no arena has any, look again,
 * home arena included, DM_STEAL_SWEEPS times (frees under way give units
 * back), and for as long as some bin of the class expects units (a grow
 * under way: its chunks are taken and being formatted), for at most
 * DM_STEAL_WAIT_NS; a full heap, where no grow is under way, says NULL
 * after those few sweeps. Requests that all grew at once took every chunk
 * of a 256 MiB heap for 64 MiB of 1 KiB blocks, and the ones that found the
 * chunks gone got NULL while the others' chunks were still on their way
 * (H100 and H200, under compute-sanitizer). */
static DM_COLD uint32_t resv_steal(dm_heap_t *h, dm_resv_t *rv, uint32_t n) {
  uint32_t got = 0, ns = 256;
  uint64_t t0 = 0;
  for (uint32_t sweep = 1;; sweep++) {
    int coming = 0;
    while (!got && rv->tries < h->narenas) {
      uint32_t a = (rv->home + rv->tries) % h->narenas;
      dm_sem_t *s = &bin_at(h, a, rv->cls)->sem;
      rv->tries++;
      got = dm_sem_try_take(s, n, 1);
      if (got) {
        rv->arena = a;
        rv->units = got;
      } else if (dm_sem_expected(s)) {
        coming = 1;
      }
    }
    if (got || (!coming && sweep >= DM_STEAL_SWEEPS)) return got;
    if (!t0)
      t0 = dm_now_ns();
    else if (dm_now_ns() - t0 > DM_STEAL_WAIT_NS)
      return 0;
    rv->tries = 0; /* the home arena too */
    dm_pause_ns(ns);
    if (ns < 4096) ns *= 2;
  }
}

/* A request of a few lanes (DM_SHARE_LANES) for a small class (up to
 * DM_SHARE_SIZE) whose bin holds no chunk is served by the first bin of its
 * group (DM_SHARE_ARENAS adjacent arenas, same class) until that bin holds
 * DM_SHARE_CHUNKS chunks; a warp with more lanes of the class, or a class
 * whose first bin holds that many, takes chunks for its own bin. Every bin
 * taking a chunk at its first request left each small class with a chunk
 * per arena, a few slots of it used: a fill of mixed sizes 16 .. 4096 B on
 * a fresh 256 MiB heap (28 arenas x 28 classes) gave a fifth of the pool to
 * the classes up to 512 B (a chunk holds 250 and more of their slots) and
 * used 73% of the heap; with this 89% (H100). Sharing for every class and
 * any request made the first pass of mixed sizes 4x slower, divergent 16 B
 * requests 0.4x and 4 and 8 KiB requests 0.1 .. 0.4x; groups of 32 arenas
 * made it 1.5 .. 1.9x slower (the first bins' one way in a 4 GiB heap),
 * groups of 8 1.2x, where it was 1.05x (H100). Moves the reservation to
 * that bin (the steal sweep starts there too) and returns it. */
static DM_INLINE dm_bin_t *bin_share(dm_heap_t *h, dm_resv_t *rv, uint32_t m, dm_bin_t *b) {
  uint32_t lead = rv->arena & ~(DM_SHARE_ARENAS - 1u);
  if (lead == rv->arena || m > DM_SHARE_LANES || h->classes[rv->cls].size > DM_SHARE_SIZE) return b;
  dm_bin_t *l = bin_at(h, lead, rv->cls);
  if (dm_load32(&l->held) >= DM_SHARE_CHUNKS) return b;
  rv->arena = rv->home = lead;
  return l;
}

/* dm_slab_grant's common case, for a reservation just initialised: the
 * home bin's semaphore has the n units and no waiter (one fetch-add), its
 * hint chunk has room for them (one fetch-add) and a word of that chunk has
 * free bits (one fetch-or). Nothing here calls out of line, so that the
 * GPU's malloc keeps this path in few registers (docs/design.md, "Calling
 * convention"). Returns the slots it claimed (bits 0: none) and leaves in
 * *rv what dm_slab_grant goes on from: units to give back to rv->chunk,
 * units to pin, slots pinned and not yet claimed. Takes nothing for more
 * slots than a chunk holds (a 32-lane warp of the classes above 4 KiB needs
 * two chunks; trying first made a fresh heap's 4 KiB allocation 0.6-0.7x as
 * fast when a 4 KiB chunk held 31 slots, H200). */
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
 * which moves the hint for the many warps a chunk of theirs serves (with
 * the hint and the next chunk only, 64 MiB 16 B alloc read 7636 .. 8145
 * Mop/s against 13820 .. 14861; for the larger classes the list search
 * under the lock, one warp after another, cost the 64 MiB 256 B alloc row:
 * 2599 .. 3931 against 3477 .. 4561 without it, H200). Returns 1 when it pinned; the
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
