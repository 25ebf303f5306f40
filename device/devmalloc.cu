/*
 * devmalloc.cu — the device module: devmalloc's device malloc, free and
 * __nv_aligned_device_malloc, with warp-level aggregation, over the allocator
 * core (compiled here as one translation unit so that everything inlines).
 *
 * malloc: the lanes of a warp that ask for the same size class at once are
 *   served together (XMalloc-style coalescing): one leader runs the two-stage
 *   slab allocation for all of them — one semaphore operation, one pin, one
 *   fetch-or per bitmap word — and the found slots are handed out by shuffle
 *   (CoRW-style sharing). Large requests: lanes with the same block order
 *   get adjacent blocks carved from one tree block; the rest go to the tree
 *   one lane at a time. A warp whose pins missed in a heap with ways looks
 *   for a chunk with room with all its lanes ("Room search" below).
 * free: a warp whose lanes free slots of one bitmap word leaves it to its
 *   first lane, which clears them with one fetch-and and accounts for them
 *   with one update of the chunk, its bin's semaphore and the counters; in
 *   any other warp each lane clears its own bit and the lanes of one chunk
 *   account together. A free is a release: the caller's stores to
 *   the block are ordered before the block can be handed out again (the
 *   slab's fetch-and is a release atomic after a warp barrier; the tree
 *   fences under its lock, the block cache publishes with a release).
 * Arenas: DM_ARENAS_PER_SM per SM, picked by %smid and the warp's slot
 * (modulo the heap's arena count).
 *
 * The heap is reached through the descriptor `devmalloc_heap_desc`, a global
 * of this device image that the host runtime writes (bind). With no heap
 * bound, malloc returns NULL, counts the call in `devmalloc_unbound_calls`
 * and prints one line per image (device printf, shown at the next
 * synchronization).
 *
 * free's common path is also a function of its own, dm_free_common, with C
 * linkage like what it calls: the shim can write its body into an
 * application's calls of free and link them with this image
 * (interpose/relink/ptx_inline.c, DEVMALLOC_JIT_INLINE).
 *
 * Locking: see slab.c and buddy.c; nothing here beyond warp intrinsics.
 */
#include <stdio.h>
#include "core_unity.h"
#include "chunk.h" /* a chunk's tag (free) */

extern "C" {
__device__ dm_heap_t *devmalloc_heap_desc;
__device__ unsigned long long devmalloc_unbound_calls;
}
static __device__ unsigned int dm_unbound_reported;

static __device__ __forceinline__ uint32_t lane_id(void) {
  uint32_t l;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(l));
  return l;
}

/* Position of the n-th (0-based) set bit of x. */
static __device__ __forceinline__ uint32_t nth_bit(uint64_t x, uint32_t n) {
  uint32_t lo = (uint32_t)x, c = (uint32_t)__popc(lo);
  if (n < c) return __fns(lo, 0, (int)n + 1);
  return 32u + __fns((uint32_t)(x >> 32), 0, (int)(n - c) + 1);
}

/* The lanes of `active` whose key equals this lane's: `active` itself when
 * every lane has the same key (two reductions, cheaper than a match, and
 * the common case: a warp's lanes ask for one size, free into one word). */
static __device__ __forceinline__ uint32_t same_key(uint32_t active, uint32_t key) {
  if (__reduce_min_sync(active, key) == __reduce_max_sync(active, key)) return active;
  return __match_any_sync(active, key);
}

static __device__ __noinline__ void *dm_unbound(void) {
  atomicAdd(&devmalloc_unbound_calls, 1ull);
  if (atomicCAS(&dm_unbound_reported, 0u, 1u) == 0u)
    printf("devmalloc: no heap bound: device malloc returns NULL. Run the program under "
           "libdevmalloc_preload.so (devmalloc run ./app) or call devmalloc_cuda_init().\n");
  return 0;
}

/* Large requests. Lanes asking for the same block order (alignment up to
 * 16 KiB) get adjacent blocks carved from one tree block by their leader: one
 * tree operation per warp instead of one per lane. What remains (different
 * orders, larger alignment, or no block that large free) is allocated one lane
 * at a time: lanes of one warp spinning on each other's locks and semaphore
 * reservations, all at once, was what made large blocks slow. When the run
 * failed because the pool has no room for even one block, every lane gets
 * NULL at once (asking again lane by lane made failing requests slower than
 * succeeding ones). */
static __device__ __noinline__ void *dm_warp_malloc_large(dm_heap_t *h, size_t size, size_t align,
                                                          uint32_t arena) {
  uint32_t active = __activemask(), lane = lane_id();
  uint32_t order = dm_heap_large_order(h, size, align);
  uint32_t key = (order != DM_MAX_ORDERS && align <= DM_DISPATCH_ALIGN) ? order : 64u + lane;
  uint32_t grp = __match_any_sync(active, key);
  uint32_t leader = (uint32_t)__ffs(grp) - 1u, k = (uint32_t)__popc(grp);
  uint32_t rank = (uint32_t)__popc(grp & ((1u << lane) - 1u));
  void *res = 0;
  int done = 0;
  if (k > 1) {
    char *first = 0;
    if (lane == leader) first = dm_heap_malloc_run(h, order, k, arena);
    first = (char *)__shfl_sync(grp, (unsigned long long)first, (int)leader);
    if (first) {
      res = first + ((uint64_t)rank << (order + DM_LEAF_SHIFT));
      done = 1;
    }
  }
  if (k > 1 && !done) { /* the run failed: in a full pool every lane would fail too */
    int full = 0;
    if (lane == leader && dm_tree_no_room(h, order)) {
      full = 1;
      dm_heap_note_failure(h, arena, k);
    }
    done = __shfl_sync(grp, full, (int)leader);
  }
  uint32_t todo = __ballot_sync(active, !done);
  for (uint32_t m = todo; m; m &= m - 1) {
    if (lane == (uint32_t)__ffs(m) - 1u) res = dm_heap_malloc_large(h, size, align, arena);
    __syncwarp(active);
  }
  return res;
}

/* Room search: in a heap with ways, a warp whose pins missed (its slot's
 * hint chunk, the one after it, its way's hint: dm_slab_pin_way) while it
 * holds units of its bin reads the chunk descriptors, all its lanes at
 * once, DM_ROOM_LOADS each a round, at most DM_ROOM_SCAN of them from a
 * random start, and returns the one (index+1, 0: none) with the most room
 * up to `want` (ties go by a rotation, so that warps searching at once
 * spread). The way lists it would search otherwise are walked by one lane,
 * a way at a time under its lock, and the few warps a pass left without a
 * chunk set the kernel's time with that walk. Every lane must run the same
 * rounds (the reductions are the group's), so what bounds them comes from
 * the leader. */
static __device__ __noinline__ uint32_t dm_warp_find_room(dm_heap_t *h, uint32_t grp, uint32_t leader,
                                                          uint32_t arena, uint32_t cls, uint32_t want) {
  uint32_t lane = lane_id(), rank = (uint32_t)__popc(grp & ((1u << lane) - 1u));
  /* the leader's span and start for all: the span moves while fresh chunks
   * are taken, and lanes that saw different ones would leave the loop at
   * different rounds, out of step with the reductions */
  uint32_t span = 0, start = 0, k = (uint32_t)__popc(grp);
  if (lane == leader) {
    span = (uint32_t)dm_reclaim_span(h);
    start = span ? dm_rand() % span : 0;
  }
  span = __shfl_sync(grp, span, (int)leader);
  start = __shfl_sync(grp, start, (int)leader);
  if (!span) return 0;
  uint32_t n = span < DM_ROOM_SCAN ? span : DM_ROOM_SCAN, rot = start & 31u;
  uint32_t tag = make_tag(arena, cls), cap = h->classes[cls].nslots;
  for (uint32_t base = 0; base < n; base += k * DM_ROOM_LOADS) {
    uint32_t best = 0, at = 0;
#pragma unroll
    for (uint32_t j = 0; j < DM_ROOM_LOADS; j++) {
      uint32_t i = base + j * k + rank;
      if (i >= n) break;
      uint32_t c = (start + i) % span, r = dm_slab_room(h, c, tag, cap);
      if (r > want) r = want;
      if (r > best) {
        best = r;
        at = c;
      }
    }
    uint32_t top = __reduce_max_sync(grp, best ? best << 5 | ((lane + rot) & 31u) : 0u);
    if (top) return __shfl_sync(grp, at, (int)((top - rot) & 31u)) + 1u;
  }
  return 0;
}

/* The slab part of a warp's request, from where its leader's fast grant left
 * it: `served` lanes of `grp` have their slot in res (counted in the
 * statistics already), and the leader's reservation (bin `tag`'s; units to
 * pin, slots pinned and not claimed, units owed back to chunk_at, see
 * dm_resv_t) goes on in dm_slab_grant.
 * The counts come packed 8 bits each (units | pinned << 8 | drop << 16 |
 * served << 24: a group has at most 32 lanes), so that the call passes few
 * registers. Returns this lane's slot, or NULL. */
static __device__ __noinline__ char *dm_warp_slab_rest(uint32_t grp, uint32_t tag, uint32_t counts,
                                                       uint32_t chunk_at, uint32_t cursor, char *res) {
  dm_heap_t *h = devmalloc_heap_desc;
  DM_GLOBAL(h);
  uint32_t lane = lane_id(), leader = (uint32_t)__ffs(grp) - 1u;
  uint32_t rank = (uint32_t)__popc(grp & ((1u << lane) - 1u)), k = (uint32_t)__popc(grp);
  uint32_t arena = tag_arena(tag), cls = tag_class(tag), served = counts >> 24, first = served;
  uint32_t slot_size = h->classes[cls].size;
  dm_resv_t rv;
  dm_resv_init(&rv, arena, cls);
  rv.units = counts & 0xffu;
  rv.pinned = (counts >> 8) & 0xffu;
  rv.drop = (counts >> 16) & 0xffu;
  rv.chunk = chunk_at;
  rv.cursor = cursor;
  while (served < k) {
    dm_grant_t g;
    g.bits = 0;
    g.slots = 0;
    g.word = 0;
    /* units and no pin: the own way, then a room search (a few times: the
     * room a search saw may be gone when it pins), then dm_slab_grant */
    uint32_t look = 0;
    if (lane == leader && h->way_mask && rv.units && !rv.pinned && !dm_slab_pin_way(h, &rv)) look = rv.units;
    look = __shfl_sync(grp, look, (int)leader);
    for (uint32_t i = 0; look && i < DM_ROOM_TRIES; i++) {
      uint32_t c = dm_warp_find_room(h, grp, leader, __shfl_sync(grp, rv.arena, (int)leader), cls, look);
      if (!c) break;
      if (lane == leader) look = dm_slab_pin_found(h, &rv, c - 1) ? 0 : rv.units;
      look = __shfl_sync(grp, look, (int)leader);
    }
    if (lane == leader) g = dm_slab_grant(h, &rv, k - served);
    uint64_t bits = __shfl_sync(grp, (unsigned long long)g.bits, (int)leader);
    if (!bits) break;
    char *slots = (char *)__shfl_sync(grp, (unsigned long long)g.slots, (int)leader);
    uint32_t word = __shfl_sync(grp, g.word, (int)leader);
    uint32_t n = (uint32_t)__popcll(bits);
    if (rank >= served && rank < served + n) {
      uint64_t slot = ((uint64_t)word << 6) + nth_bit(bits, rank - served);
      res = slots + slot * slot_size;
    }
    served += n;
  }
  if (lane == leader) {
    if (served > first) dm_heap_note_slab(h, arena, cls, served - first);
    if (served < k) dm_heap_note_failure(h, arena, k - served);
  }
  return res;
}

/* Every request but the common case (dm_warp_malloc): no heap bound, bad
 * arguments, check mode, alignment above the minimum, large blocks. */
static __device__ __noinline__ void *dm_warp_malloc_slow(size_t size, size_t align) {
  dm_heap_t *h = devmalloc_heap_desc;
  if (!h) return dm_unbound();
  DM_GLOBAL(h);
  if (size == 0 || align == 0 || (align & (align - 1)) != 0) return 0;
  if (align < DM_MIN_ALIGN) align = DM_MIN_ALIGN;
  uint64_t want = size;
  size = dm_heap_request_size(h, size);
  int cls = dm_class_of(size, align);
  uint32_t arena = dm_heap_arena(h);
  if (cls < 0) {
    char *p = (char *)dm_warp_malloc_large(h, size, align, arena);
    if (p && h->check) dm_check_arm(p, want, 1ull << (dm_heap_large_order(h, size, align) + DM_LEAF_SHIFT));
    return p;
  }
  uint32_t grp = same_key(__activemask(), (uint32_t)cls);
  char *res = dm_warp_slab_rest(grp, make_tag(arena, (uint32_t)cls), 0, 0, 0, 0);
  if (res && h->check) dm_check_arm(res, want, h->classes[cls].size);
  return res;
}

/* The common case: a slab class at the minimum alignment, served by the
 * lanes' leader from one bitmap word (dm_slab_grant_fast). It calls nothing
 * out of line but where it ends (the rest in dm_warp_slab_rest, everything
 * else in dm_warp_malloc_slow): a malloc that used the call-saved registers
 * R16-R31 saved them all in its prologue on every call, and small requests
 * waited on those local-memory stores and loads. */
static __device__ void *dm_warp_malloc(size_t size, size_t align) {
  dm_heap_t *h = devmalloc_heap_desc;
  if (!h || h->check || size == 0 || size > DM_SLAB_MAX || align > DM_MIN_ALIGN || align == 0 ||
      (align & (align - 1)) != 0)
    return dm_warp_malloc_slow(size, align);
  DM_GLOBAL(h);
  if (size < h->min_block) size = h->min_block;
  size = dm_heap_round(h, size);
  int cls = dm_class_of(size, DM_MIN_ALIGN);
  if (cls < 0) return dm_warp_malloc_slow(size, align);
  uint32_t arena = dm_heap_arena(h);
  uint32_t grp = same_key(__activemask(), (uint32_t)cls);
  uint32_t lane = lane_id(), leader = (uint32_t)__ffs(grp) - 1u, k = (uint32_t)__popc(grp);
  dm_resv_t rv;
  dm_resv_init(&rv, arena, (uint32_t)cls);
  dm_grant_t g;
  g.bits = 0;
  g.slots = 0;
  g.word = 0;
  g.size = 0;
  if (lane == leader) {
    g = dm_slab_grant_fast(h, &rv, k);
    if (g.bits) dm_heap_note_slab(h, arena, (uint32_t)cls, (uint32_t)__popcll(g.bits));
  }
  uint64_t bits = __shfl_sync(grp, (unsigned long long)g.bits, (int)leader);
  char *slots = (char *)__shfl_sync(grp, (unsigned long long)g.slots, (int)leader);
  uint32_t word = __shfl_sync(grp, g.word, (int)leader);
  uint32_t slot_size = __shfl_sync(grp, g.size, (int)leader);
  uint32_t n = (uint32_t)__popcll(bits), rank = (uint32_t)__popc(grp & ((1u << lane) - 1u));
  char *res = 0;
  if (rank < n) res = slots + (((uint64_t)word << 6) + nth_bit(bits, rank)) * slot_size;
  if (n < k)
    return dm_warp_slab_rest(grp, make_tag(arena, (uint32_t)cls),
                             rv.units | rv.pinned << 8 | rv.drop << 16 | n << 24, rv.chunk, rv.cursor, res);
  return res;
}

/* Large frees. Lookups run in parallel (read-only). Lanes whose blocks are a
 * whole aligned group of 2^j blocks of one order (a run from
 * dm_warp_malloc_large freed by the same warp) free it as one block; the
 * others free one lane at a time (see dm_warp_malloc_large). */
static __device__ __forceinline__ void dm_warp_free_large(dm_heap_t *h, uint64_t off) {
  uint32_t lg = __activemask(), lane = lane_id();
  int why;
  uint64_t node = dm_heap_large_lookup(h, off, &why);
  if (!node)
    dm_heap_note_misuse(h, why);
  else if (h->check)
    dm_heap_check_free(h, h->buddy.base + off, dm_heap_node_bytes(h, node));
  uint32_t key = node && node < (1ull << 32) ? dm_buddy_order(&h->buddy, node) : 64u + lane;
  uint32_t grp = __match_any_sync(lg, key);
  uint32_t k = (uint32_t)__popc(grp), leader = (uint32_t)__ffs(grp) - 1u;
  int done = !node;
  if (key < 64u && k > 1 && (k & (k - 1)) == 0) {
    uint32_t n = (uint32_t)node;
    uint32_t lo = __reduce_min_sync(grp, n), hi = __reduce_max_sync(grp, n);
    uint32_t alone = __ballot_sync(grp, __match_any_sync(grp, n) == (1u << lane));
    if (hi - lo + 1u == k && lo % k == 0 && alone == grp) {
      /* The run becomes one block: the k - 1 nodes above its blocks marked
       * BUSY, one by each lane but the last (node r of the run for the lane
       * of rank r), before the leader's free publishes it (the warp barrier
       * orders the lanes' stores). */
      uint32_t j = (uint32_t)__ffs(k) - 1u, r = (uint32_t)__popc(grp & ((1u << lane) - 1u));
      if (r + 1u < k) dm_store32(&h->buddy.state[dm_buddy_run_node(lo >> j, r)], DM_NODE_BUSY);
      __syncwarp(grp);
      if (lane == leader) dm_heap_free_nodes(h, lo >> j, j, dm_heap_arena(h));
      done = 1;
    }
  }
  uint32_t todo = __ballot_sync(lg, !done);
  for (uint32_t m = todo; m; m &= m - 1) {
    if (lane == (uint32_t)__ffs(m) - 1u) dm_heap_free_nodes(h, node, 0, dm_heap_arena(h));
    __syncwarp(lg);
  }
}

/* One word: the lanes of `active` free their slots (bits lo | hi << 32 of
 * each) of bitmap word `word` of chunk `chunk` (tag `tag`); the first lane
 * clears them with one fetch-and after a warp barrier (a release: the lanes'
 * stores to their blocks come first) and accounts for them alone. What the
 * fetch-and found clear, and lanes beyond the distinct bits (a pointer twice
 * in the warp), are double frees. Returns the slots freed to the first lane,
 * 0 to the others (done). */
static __device__ __forceinline__ uint32_t dm_warp_free_word(dm_heap_t *h, uint32_t active, uint32_t lane,
                                                             uint32_t chunk, uint32_t tag, uint32_t word,
                                                             uint32_t lo, uint32_t hi) {
  lo = __reduce_or_sync(active, lo);
  hi = __reduce_or_sync(active, hi);
  __syncwarp(active);
  if (lane != (uint32_t)__ffs(active) - 1u) return 0;
  uint32_t count = (uint32_t)__popcll(dm_slab_free_bits(h, chunk, tag, word, (uint64_t)hi << 32 | lo));
  if (count != (uint32_t)__popc(active))
    dm_heap_note_misuses(h, DM_FREE_DOUBLE, (uint32_t)__popc(active) - count);
  return count;
}

/* The account of `count` slots of chunk `chunk` (tag `tag`) that a warp's
 * lane freed, counted in the chunk's arena: its tag has it, where the
 * caller's arena would take a division by the arena count. */
static __device__ __forceinline__ void dm_warp_free_commit(dm_heap_t *h, uint32_t chunk, uint32_t tag,
                                                           uint32_t count) {
  dm_heap_note_free(h, tag_arena(tag), tag_class(tag), count);
  dm_slab_free_commit(h, chunk, tag, count);
}

/* The warp's part of a slab free: lanes of `active` free slot `slot` of
 * chunk `chunk` (tag `tag`, located and checked: dm_slab_locate); `check`:
 * verify the block's canary (check mode). Few values live through it, 32
 * bits wide (the slot, not its word and a 64-bit bit), and the lanes of a
 * one-word warp but its first leave after the barrier: every call-saved
 * register the device free uses is saved and restored on each call
 * (docs/design.md, "Calling convention"). */
static __device__ __forceinline__ void dm_warp_free_slots(dm_heap_t *h, const char *p, uint32_t chunk,
                                                          uint32_t slot, uint32_t tag, int check) {
  uint32_t active = __activemask(), lane = lane_id(), word = slot >> 6, b = slot & 63u;
  uint32_t lo = b < 32u ? 1u << b : 0u, hi = b < 32u ? 0u : 1u << (b - 32u);
  /* The lanes freeing into this lane's bitmap word: all of them, commonly. */
  uint32_t wg = h->nchunks <= (1u << 25) /* the key fits 32 bits: heaps below 4 TiB */
                    ? same_key(active, chunk * DM_CHUNK_WORDS + word)
                    : __match_any_sync(active, (unsigned long long)chunk * DM_CHUNK_WORDS + word);
  /* The lanes' stores to their blocks before the slots are free: the
   * fetch-and is a release (a store still in flight could land in the next
   * owner's data, another SM's maybe), and the warp barrier puts the other
   * lanes' stores before the leader's. A large block's free fences under
   * the tree's lock or publishes it in the block cache with a release. */
  uint32_t count;
  if (wg == active && !check) {
    count = dm_warp_free_word(h, active, lane, chunk, tag, word, lo, hi);
    if (!count) return;
  } else {
    /* Any other warp: each lane clears its own bit (a pointer freed twice
     * in one warp is found by the second clear), and the lanes of one
     * chunk account together. Every intrinsic names all of `active`: one
     * with the mask of the lane's group runs, in a warp of several groups,
     * as a loop over the groups (docs/benchmarks.md, "The free path,
     * profiled", has what it cost). */
    __syncwarp(active);
    int ok = dm_slab_free_bits(h, chunk, tag, word, (uint64_t)hi << 32 | lo) != 0;
    if (!ok)
      dm_heap_note_misuse(h, DM_FREE_DOUBLE);
    else if (check)
      dm_heap_check_free(h, p, h->classes[tag_class(tag)].size);
    uint32_t cg = __match_any_sync(active, chunk);
    count = (uint32_t)__popc(__ballot_sync(active, ok) & cg);
    if (lane != (uint32_t)__ffs(cg) - 1u) return;
  }
  if (count) dm_warp_free_commit(h, chunk, tag, count);
}

/* Every free the common path does not serve, in one function (each call
 * level saves and restores its registers): a pointer outside the pool, a
 * large block, a misuse, check mode. `why`: what the common path's
 * dm_slab_locate said (a pointer that is no slot of a slab chunk is a large
 * block's or a misuse: dm_slab_outside decides), or DM_FREE_UNREAD (it did
 * not locate the pointer: located here). */
#define DM_FREE_UNREAD (-1)
static __device__ __noinline__ void dm_warp_free_slow(dm_heap_t *h, const char *p, int why) {
  char *base = h->buddy.base;
  uint64_t off = (uint64_t)(p - base);
  if (p < base || off >= h->buddy.pool_bytes) {
    dm_heap_note_misuse(h, DM_FREE_FOREIGN);
    return;
  }
  uint32_t chunk, slot, tag;
  if (why == DM_FREE_UNREAD) why = dm_slab_locate(h, off, &chunk, &slot, &tag);
  if (why == DM_FREE_OK) { /* only in check mode: the common path frees every other slot */
    dm_warp_free_slots(h, p, chunk, slot, tag, 1);
    return;
  }
  if (why == DM_FREE_NOT_SLAB) why = dm_slab_outside(h, off);
  if (why == DM_FREE_LARGE)
    dm_warp_free_large(h, off);
  else
    dm_heap_note_misuse(h, why);
}

/* free: the common path (a slot of a slab chunk, check mode off) inline,
 * the rest out of line. The descriptor's fields that decide it are loaded
 * together, and tested with dm_slab_locate's answer in one branch. */
static __device__ void dm_warp_free(void *p) {
  if (!p) return;
  dm_heap_t *h = devmalloc_heap_desc;
  if (!h) return; /* nothing was allocated from a heap: nothing to free */
  DM_GLOBAL(h);
  const char *base = h->buddy.base;
  uint64_t pool = h->buddy.pool_bytes, off = (uint64_t)((const char *)p - base);
  uint32_t check = h->check, chunk, slot, tag;
  /* located before the pool's test, so that the descriptor's loads go
   * together (any offset is safe to locate; outside, its answer is not used) */
  int why = dm_slab_locate(h, off, &chunk, &slot, &tag);
  if (((const char *)p < base) | (off >= pool) | (check != 0)) why = DM_FREE_UNREAD;
  if (why != DM_FREE_OK) {
    dm_warp_free_slow(h, (const char *)p, why);
    return;
  }
  dm_warp_free_slots(h, (const char *)p, chunk, slot, tag, 0);
}

/* free of a pointer dm_free_common located (why: dm_slab_locate's answer,
 * DM_FREE_UNREAD outside the pool or in check mode), for the warps that are
 * not its common case: what free does after its locate. */
extern "C" __device__ __noinline__ void dm_free_located(void *p, int why, uint32_t chunk, uint32_t slot,
                                                        uint32_t tag) {
  dm_heap_t *h = devmalloc_heap_desc;
  DM_GLOBAL(h);
  if (why != DM_FREE_OK) {
    dm_warp_free_slow(h, (const char *)p, why);
    return;
  }
  dm_warp_free_slots(h, (const char *)p, chunk, slot, tag, 0);
}

/* The overrides. Guarded by __CUDA_ARCH__: in nvcc's host pass these would
 * become host malloc/free stubs that replace libc's in the whole process. */
#if defined(__CUDA_ARCH__)
extern "C" __device__ void *malloc(size_t size) throw() { return dm_warp_malloc(size, DM_MIN_ALIGN); }
extern "C" __device__ void free(void *p) throw() { dm_warp_free(p); }

/* free's common path on its own: a warp whose lanes all free slots of one
 * bitmap word of a slab chunk, check mode off (dm_warp_free_slots' first
 * case); any other warp goes on in dm_free_located with what its lanes
 * located. The shim writes this body into an application's calls of free
 * (interpose/relink/ptx_inline.c) when DEVMALLOC_JIT_INLINE=1: short, so
 * that the driver's compile of each caller stays short. The decision is the
 * warp's (its lanes' keys reduced), so that dm_free_located sees the lanes
 * free would. */
extern "C" __device__ __noinline__ void dm_free_common(void *p) {
  if (!p) return;
  dm_heap_t *h = devmalloc_heap_desc;
  if (!h) return;
  DM_GLOBAL(h);
  const char *base = h->buddy.base;
  uint64_t pool = h->buddy.pool_bytes, off = (uint64_t)((const char *)p - base);
  uint32_t chunk, slot, tag, active = __activemask();
  int why = dm_slab_locate(h, off, &chunk, &slot, &tag);
  if (((const char *)p < base) | (off >= pool) | (h->check != 0)) why = DM_FREE_UNREAD;
  /* below 2^25 chunks no key is ~0 */
  uint32_t key = why == DM_FREE_OK && h->nchunks < (1u << 25) ? chunk * DM_CHUNK_WORDS + (slot >> 6) : ~0u;
  if (key == ~0u || __reduce_min_sync(active, key) != __reduce_max_sync(active, key)) {
    dm_free_located(p, why, chunk, slot, tag);
    return;
  }
  uint32_t b = slot & 63u, count = dm_warp_free_word(h, active, lane_id(), chunk, tag, slot >> 6,
                                                     b < 32u ? 1u << b : 0u, b < 32u ? 0u : 1u << (b - 32u));
  if (count) dm_warp_free_commit(h, chunk, tag, count);
}
extern "C" __device__ void *__nv_aligned_device_malloc_impl(size_t size, size_t align) {
  return dm_warp_malloc(size, align);
}
/* What calls to __nv_aligned_device_malloc compile to in user code. */
extern "C" __device__ void *__cuda_syscall_aligned_malloc(size_t size, size_t align) {
  return dm_warp_malloc(size, align);
}
#endif

/* ------------------------------------------------------------ host side ---
 * Write this device image's descriptor (used by devmalloc_cuda_init() in
 * cuda_init.cpp, a separate archive member so that programs that never call
 * it need no -ldevmalloc). cudaMemcpyToSymbol can only name the descriptor
 * from this translation unit. */
extern "C" cudaError_t devmalloc__write_desc(unsigned long long heap_device_ptr) {
  return cudaMemcpyToSymbol(devmalloc_heap_desc, &heap_device_ptr, sizeof heap_device_ptr);
}
