/*
 * buddy.c — the tree buddy allocator (the paper's TBuddy) for large blocks
 * and for the slab's chunks.
 *
 * A static binary tree over the pool (root 1, children 2i and 2i+1; a node of
 * order h covers 16 KiB << h). Node states: AVAIL, BUSY, and SPLIT (its
 * children hold the state of its memory). Split nodes carry no summary of
 * their subtree: allocation never descends the tree, so nothing walks up it
 * either (no ancestor locks on the hot path). One bulk semaphore per order
 * counts the AVAIL nodes of that order, and a two-level bitmap per order says
 * which they are: a summary bit per 64-node word marks words that may hold
 * one, and claims search from a pseudo-random summary word (RW-BM). Blocks
 * are aligned to their size relative to the pool.
 *
 * alloc(n): wait on sem[n]; OK -> claim an AVAIL node of order n from the
 *   bitmap; GROW -> obtain a node of order n+1 (same way, recursively, written
 *   as a loop), split it, keep the left child, signal sem[n] and make the
 *   right child AVAIL. Failure at the root unwinds every expectation.
 * A node may also be CACHED: a freed block the block cache keeps whole
 *   (blockcache.c); the tree treats it as allocated.
 * free(x): under the parent's lock, if the buddy is AVAIL and try-wait on
 *   sem[n] succeeds, merge (both BUSY, parent becomes the block being freed)
 *   and continue one order up; otherwise x becomes AVAIL.
 *
 * Locking: one spin lock per node. A thread holds at most a parent and its
 * two children, always taking the parent first and children in index order,
 * or a single node, so there is no lock cycle. A node's state word is
 * written under its lock, or by the owner of a block inside that block
 * before any part of it is made AVAIL; it is read without a lock. Bitmap words and
 * summary words are updated by atomic or/and; a summary bit may be set over
 * an empty word for a moment (searchers skip it), never clear over a word
 * with a bit set once the updates that raced have finished (set_busy
 * re-checks the word after clearing the summary bit).
 */
#include "dm_internal.h"

static DM_INLINE uint32_t node_depth(uint64_t i) { return 63u - (uint32_t)dm_clz64(i); }
static DM_INLINE uint32_t node_order(const dm_buddy_t *b, uint64_t i) { return b->top - node_depth(i); }
static DM_INLINE uint64_t node_rank(uint64_t i) { return i - (1ull << node_depth(i)); }

DM_FN uint64_t dm_buddy_node_offset(const dm_buddy_t *b, uint64_t i) {
  return node_rank(i) << (node_order(b, i) + DM_LEAF_SHIFT);
}

DM_FN uint64_t dm_buddy_node_at(const dm_buddy_t *b, uint32_t order, uint64_t off) {
  return (1ull << (b->top - order)) + (off >> (order + DM_LEAF_SHIFT));
}

static DM_INLINE void node_lock(dm_buddy_t *b, uint64_t i) {
  while (dm_cas32(&b->lock[i], 0u, 1u) != 0u) dm_pause();
  dm_fence();
}

static DM_INLINE void node_unlock(dm_buddy_t *b, uint64_t i) {
  dm_fence();
  dm_store32(&b->lock[i], 0u);
  DM_CHAOS_POINT();
}

static DM_INLINE uint64_t *avail_word(dm_buddy_t *b, uint64_t i, uint64_t *bit) {
  return &b->avail[dm_avail_index(b, node_order(b, i), node_rank(i), bit)];
}

static DM_INLINE uint64_t *summary_word(dm_buddy_t *b, uint64_t i, uint64_t *bit) {
  return &b->avail[dm_summary_index(b, node_order(b, i), node_rank(i), bit)];
}

static DM_INLINE void set_avail(dm_buddy_t *b, uint64_t i) {
  uint64_t bit, sbit, *w = avail_word(b, i, &bit), *s = summary_word(b, i, &sbit);
  dm_store32(&b->state[i], DM_NODE_AVAIL);
  dm_or64(w, bit);
  dm_fence(); /* the word's bit before the summary bit */
  dm_or64(s, sbit);
}

static DM_INLINE void set_busy(dm_buddy_t *b, uint64_t i) {
  uint64_t bit, *w = avail_word(b, i, &bit);
  uint64_t left = dm_and64(w, ~bit) & ~bit;
  dm_store32(&b->state[i], DM_NODE_BUSY);
  if (left) return;
  uint64_t sbit, *s = summary_word(b, i, &sbit);
  dm_and64(s, ~sbit);
  dm_fence(); /* a bit set meanwhile is seen here, or its setter's summary
               * update comes after ours */
  if (dm_load64(w)) dm_or64(s, sbit);
}

/* Take one AVAIL node of `order`; a semaphore unit guarantees one exists. */
DM_FN uint64_t dm_buddy_claim(dm_buddy_t *b, uint32_t order) {
  uint64_t nodes = 1ull << (b->top - order);
  uint64_t nwords = (nodes + 63u) >> 6, nsum = (nwords + 63u) >> 6;
  uint64_t *words = &b->avail[b->word_off[order]], *sums = &b->avail[b->sum_off[order]];
  uint64_t start = nsum > 1 ? dm_rand() % nsum : 0;
  for (uint64_t k = 0;; k++) {
    uint64_t si = (start + k) % nsum;
    uint64_t sw = dm_load64(&sums[si]);
    while (sw) {
      uint64_t wi = (si << 6) + (uint64_t)dm_ctz64(sw);
      sw &= sw - 1;
      uint64_t w = dm_load64(&words[wi]);
      while (w) {
        int bit = dm_ctz64(w);
        w &= w - 1;
        uint64_t i = nodes + (wi << 6) + (uint64_t)bit;
        if (dm_load32(&b->state[i]) != DM_NODE_AVAIL) continue;
        node_lock(b, i);
        int ok = dm_load32(&b->state[i]) == DM_NODE_AVAIL;
        if (ok) set_busy(b, i);
        node_unlock(b, i);
        if (ok) return i;
      }
    }
    if ((k + 1) % nsum == 0) dm_pause();
  }
}

/* Make node r (owned, BUSY, not split) AVAIL, retiring `expected` units the
 * caller announced at its order: its unit first (see the note at free), under
 * its parent's and both children's locks so that a free of its buddy decides
 * on a settled state. */
static DM_INLINE void publish_avail(dm_buddy_t *b, uint64_t r, uint32_t expected) {
  uint64_t p = r >> 1;
  node_lock(b, p);
  node_lock(b, 2 * p);
  node_lock(b, 2 * p + 1);
  dm_sem_signal(&b->sem[node_order(b, r)], 1, expected);
  set_avail(b, r);
  node_unlock(b, 2 * p + 1);
  node_unlock(b, 2 * p);
  node_unlock(b, p);
}

/* Set the nodes of the `levels` top levels of the subtree at y (y's level
 * included) to `state`. Only for a subtree the caller owns whole. */
static DM_INLINE void set_subtree(dm_buddy_t *b, uint64_t y, uint32_t levels, uint32_t state) {
  for (uint32_t d = 0; d < levels; d++)
    for (uint64_t i = y << d, e = (y + 1) << d; i < e; i++) dm_store32(&b->state[i], state);
}

/* Split node y (owned, BUSY, not split): keep the left child, free the right
 * (the caller GROWed at its order). */
static DM_INLINE uint64_t split_node(dm_buddy_t *b, uint64_t y) {
  dm_store32(&b->state[y], DM_NODE_SPLIT);
  publish_avail(b, 2 * y + 1, 1);
  return 2 * y;
}

/* True when no order from `order` up has a block or one on the way: the
 * request cannot succeed (read-only check, so that a full heap answers
 * NULL at once instead of every caller growing and unwinding at the root). */
DM_FN int dm_buddy_exhausted(dm_buddy_t *b, uint32_t order) {
  for (uint32_t h = order; h <= b->top; h++) {
    uint64_t w = dm_load64(&b->sem[h].w);
    if (dm_semw_c(w) > 0 || dm_semw_e(w) != 0) return 0;
  }
  return 1;
}

/* Blocks on their way into the tree: a merge holds its buddy's unit and
 * owns the pair until it signals one order up; a release (fresh.c) or a
 * flush (blockcache.c) holds blocks that are in no semaphore until it frees
 * them. A request that finds the tree exhausted while such a move is under
 * way waits for it instead of failing (tree.c). */
DM_FN void dm_buddy_move_begin(dm_buddy_t *b) {
  dm_add64(b->moving, 1);
  dm_fence(); /* counted before the blocks leave every semaphore */
}
DM_FN void dm_buddy_move_end(dm_buddy_t *b) {
  dm_fence(); /* the blocks' units signalled before the count drops */
  dm_add64(b->moving, (uint64_t)0 - 1u);
}

/* No block of `order` or above, none on the way (splits: the semaphores'
 * expected units; merges and releases: `moving`), read in that order and the
 * semaphores again, so that a move that ended before the count read 0 is
 * seen: the tree cannot serve the request now, and waiting would not help. */
DM_FN int dm_buddy_settled_empty(dm_buddy_t *b, uint32_t order) {
  if (!dm_buddy_exhausted(b, order)) return 0;
  dm_fence();
  if (dm_load64(b->moving)) return 0;
  dm_fence();
  return dm_buddy_exhausted(b, order);
}

/* Allocate a block of `order`. Returns its node index, 0 when out of memory. */
DM_COLD uint64_t dm_buddy_alloc(dm_buddy_t *b, uint32_t order) {
  if (order > b->top || dm_buddy_exhausted(b, order)) return 0;
  uint32_t h = order;
  uint64_t node = 0;
  for (;;) {
    if (dm_sem_wait(&b->sem[h], 1, 2) == DM_SEM_OK) {
      DM_CHAOS_POINT();
      node = dm_buddy_claim(b, h);
      break;
    }
    if (h == b->top) break; /* GROW at the root: nothing to split */
    h++;
  }
  if (!node) { /* unwind the expectations taken on the way up */
    for (uint32_t l = order; l <= h; l++) dm_sem_signal(&b->sem[l], 0, 1);
    return 0;
  }
  while (h > order) { /* split down, giving each right child to its order */
    node = split_node(b, node);
    h--;
  }
  return node;
}

/* Carve the owned node y of order h into k blocks of order o taken from its
 * start: nodes on the way are marked SPLIT, the blocks stay BUSY, and each
 * right half that gets no block is noted in `spare` (made AVAIL later).
 * Returns the number of spares. */
static DM_INLINE uint32_t carve(dm_buddy_t *b, uint64_t y, uint32_t h, uint32_t o, uint32_t k,
                                uint64_t *spare) {
  uint32_t n = 0;
  for (; h > o; h--) {
    uint32_t half = 1u << (h - 1 - o);
    dm_store32(&b->state[y], DM_NODE_SPLIT);
    if (k <= half) { /* all in the left half: the right one is spare */
      spare[n++] = 2 * y + 1;
      y = 2 * y;
    } else { /* the left half is handed out whole; go on in the right */
      set_subtree(b, 2 * y, h - 1 - o, DM_NODE_SPLIT);
      y = 2 * y + 1;
      k -= half;
    }
  }
  return n;
}

/* Allocate k adjacent blocks of `order` (a warp's lanes asking for the same
 * size) with one tree operation: a block of order + ceil(log2 k) whose first
 * k sub-blocks are handed out and whose rest goes back to the tree as its
 * maximal free halves. Returns the first block's node (block i starts i
 * blocks after it), 0 when no block that large is free. */
DM_COLD uint64_t dm_buddy_alloc_run(dm_buddy_t *b, uint32_t order, uint32_t k) {
  uint32_t j = 0;
  while ((1u << j) < k) j++;
  if (order + j > b->top) return 0;
  if (j > 8) return 0; /* runs are at most a warp (k <= 32, j <= 5) */
  uint64_t y = dm_buddy_alloc(b, order + j);
  return y ? dm_buddy_run_from(b, y, order, k) : 0;
}

/* The run of k blocks of `order` at the start of the owned block y (BUSY,
 * not split, of order + ceil(log2 k)): see dm_buddy_alloc_run. Returns the
 * first block's node. */
DM_FN uint64_t dm_buddy_run_from(dm_buddy_t *b, uint64_t y, uint32_t order, uint32_t k) {
  uint32_t j = node_order(b, y) - order;
  if (j == 0) return y;
  uint64_t spare[8]; /* carve leaves at most one free half per level: j */
  uint32_t nspare = carve(b, y, order + j, order, k, spare);
  dm_fence(); /* the SPLIT marks before any spare can be claimed and freed */
  for (uint32_t i = 0; i < nspare; i++) publish_avail(b, spare[i], 0);
  return y << j;
}

/* Free an owned node of `order` (BUSY, not split), merging with its buddy.
 *
 * When the buddy is AVAIL but try-wait fails, every unit of the order is held
 * by a waiter or a merge in flight. Making x AVAIL then would strand the pair:
 * a waiter holding "the buddy's" unit may claim some other node freed
 * meanwhile, and both buddies stay free and unmerged for good (seen on the
 * GPU under heavy chunk churn). So the free waits, holding no lock, until the
 * buddy is taken (no merge: x becomes AVAIL) or a unit is free (merge). It
 * cannot wait forever: while the buddy is AVAIL and no unit is free, some
 * waiter or merge is in flight and finishes, and when none is, the buddy's own
 * unit is free. A node's unit is signalled before the node becomes AVAIL (here
 * and in split_node), so a failed try-wait never misses a node being made
 * AVAIL. */
DM_COLD void dm_buddy_free(dm_buddy_t *b, uint64_t x) {
  uint32_t order = node_order(b, x);
  int moving = 0; /* counted in b->moving from the first merge on */
  for (;;) {
    if (x == 1) {
      node_lock(b, x);
      dm_sem_signal(&b->sem[order], 1, 0);
      set_avail(b, x);
      node_unlock(b, x);
      break;
    }
    uint64_t p = x >> 1, bud = x ^ 1u;
    node_lock(b, p);
    node_lock(b, p * 2);
    node_lock(b, p * 2 + 1);
    if (dm_load32(&b->state[bud]) == DM_NODE_AVAIL) {
      if (!moving) { /* before the buddy's unit is taken */
        dm_buddy_move_begin(b);
        moving = 1;
      }
      int merge = dm_sem_try_wait(&b->sem[order], 1);
      if (merge) {
        set_busy(b, bud);
        dm_store32(&b->state[p], DM_NODE_BUSY); /* p is now an owned block, not split */
      }
      node_unlock(b, p * 2 + 1);
      node_unlock(b, p * 2);
      node_unlock(b, p);
      if (merge) {
        x = p;
        order++;
      } else {
        dm_pause(); /* the buddy's unit is held by a waiter or merge in flight */
      }
      continue;
    }
    dm_sem_signal(&b->sem[order], 1, 0);
    set_avail(b, x);
    node_unlock(b, p * 2 + 1);
    node_unlock(b, p * 2);
    node_unlock(b, p);
    break;
  }
  if (moving) dm_buddy_move_end(b);
}

/* Find the allocated node that starts at pool offset `off`.
 * Returns the node, or 0 with *why = DM_FREE_FOREIGN / DM_FREE_DOUBLE.
 * Walks up from the leaf at `off` to the first node whose parent is split:
 * the allocated block holding `off` (nodes under an allocated block are
 * plain BUSY, and its parent stays split while it is allocated), so a 16 KiB
 * block costs two loads where a walk down from the root cost the tree's
 * height; a node and its parent are loaded together (one round trip a
 * level). */
DM_FN uint64_t dm_buddy_lookup(const dm_buddy_t *b, uint64_t off, int *why) {
  *why = DM_FREE_FOREIGN;
  if (off >= b->pool_bytes || (off & ((1ull << DM_LEAF_SHIFT) - 1)) != 0) return 0;
  uint64_t i = dm_buddy_node_at(b, 0, off);
  for (;;) {
    uint32_t s = dm_load32(&b->state[i]), up = i == 1 ? DM_NODE_SPLIT : dm_load32(&b->state[i >> 1]);
    if (s == DM_NODE_AVAIL || s == DM_NODE_CACHED) { /* free already (maybe merged or cached since) */
      *why = DM_FREE_DOUBLE;
      return 0;
    }
    if (s & DM_NODE_SPLIT) return 0; /* a racing or bogus free: not a block */
    if (up & DM_NODE_SPLIT) break;
    i >>= 1;
  }
  if (dm_buddy_node_offset(b, i) != off) return 0;
  *why = DM_FREE_OK;
  return i;
}

/* Free the 2^j adjacent blocks under node y (all allocated, owned by the
 * caller: a warp freeing a run it got from dm_buddy_alloc_run, or any whole
 * aligned group) as one block: y's split nodes become a plain block, then one
 * free merges it upward. */
DM_COLD void dm_buddy_free_run(dm_buddy_t *b, uint64_t y, uint32_t j) {
  dm_buddy_join_stores(b, y, j);
  dm_fence();
  dm_buddy_free(b, y);
}

/* Make the 2^j allocated blocks under node y one plain block (BUSY, not
 * split): the stores only, which the caller orders before the block is
 * reachable again (dm_buddy_free_run's fence; a warp's free does the same
 * stores with its lanes, devmalloc.cu). */
DM_FN void dm_buddy_join_stores(dm_buddy_t *b, uint64_t y, uint32_t j) {
  for (uint32_t r = 0; r + 1u < (1u << j); r++) dm_store32(&b->state[dm_buddy_run_node(y, r)], DM_NODE_BUSY);
}

/* Misuse class of a free of pool offset `off` that is not a live block:
 * DM_FREE_DOUBLE when the memory around it is free (a block freed twice,
 * maybe after its chunk or buddy went back to the tree), else FOREIGN. */
DM_FN int dm_buddy_classify(const dm_buddy_t *b, uint64_t off) {
  if (off >= b->pool_bytes) return DM_FREE_FOREIGN;
  uint64_t i = 1;
  while (dm_load32(&b->state[i]) & DM_NODE_SPLIT) {
    uint64_t half = 1ull << (node_order(b, i) - 1 + DM_LEAF_SHIFT);
    i = 2 * i + ((off & half) ? 1u : 0u);
  }
  uint32_t s = dm_load32(&b->state[i]);
  return s == DM_NODE_AVAIL || s == DM_NODE_CACHED ? DM_FREE_DOUBLE : DM_FREE_FOREIGN;
}

/* Take the block of `order` at pool offset `off` out of the tree when it is
 * free: AVAIL itself, or inside an AVAIL block, which is split down to it
 * (the other halves go back AVAIL). Returns its node (BUSY, owned by the
 * caller), 0 when some of it is allocated or every unit of the free block's
 * order is held by a waiter (a grower taking memory back never waits).
 * Used to take free granules back from the top of a growing heap (grow.c);
 * safe against concurrent allocations and frees: the same unit-then-lock
 * protocol as a claim, and the same split as an allocation. */
DM_COLD uint64_t dm_buddy_claim_at(dm_buddy_t *b, uint32_t order, uint64_t off) {
  uint64_t n = dm_buddy_node_at(b, order, off), i = n;
  for (;;) { /* the free block holding n: nodes under a free block are BUSY */
    uint32_t s = dm_load32(&b->state[i]);
    if (s == DM_NODE_AVAIL) break;
    if ((s & DM_NODE_SPLIT) || s == DM_NODE_CACHED || i == 1)
      return 0; /* allocated or cached, or part of it is */
    i >>= 1;
  }
  uint32_t h = node_order(b, i);
  if (!dm_sem_try_wait(&b->sem[h], 1)) return 0;
  node_lock(b, i);
  int ok = dm_load32(&b->state[i]) == DM_NODE_AVAIL;
  if (ok) set_busy(b, i);
  node_unlock(b, i);
  if (!ok) { /* taken or merged meanwhile: give the unit back */
    dm_sem_signal(&b->sem[h], 1, 0);
    return 0;
  }
  while (i != n) { /* split down towards n, freeing the other halves */
    uint32_t down = node_depth(n) - node_depth(i) - 1;
    uint64_t keep = n >> down, other = keep ^ 1u;
    dm_store32(&b->state[i], DM_NODE_SPLIT);
    publish_avail(b, other, 0);
    i = keep;
  }
  return n;
}

DM_FN uint32_t dm_buddy_order(const dm_buddy_t *b, uint64_t node) { return node_order(b, node); }

DM_FN char *dm_buddy_addr(const dm_buddy_t *b, uint64_t node) {
  return b->base + dm_buddy_node_offset(b, node);
}
