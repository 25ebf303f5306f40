/*
 * layout.c — plan, format and read a heap from the host (host only).
 *
 * dm_layout_compute() decides how heap_bytes are split into the pool and the
 * metadata arrays; dm_heap_build() fills a dm_heap_t with the addresses those
 * arrays will have at a given base (device or host addresses alike);
 * dm_heap_format() writes the few non-zero metadata words (tree nodes on the
 * pool's boundary, the available bits, the semaphore counts, the heap
 * struct) through a write callback, and the fresh chunks (fresh.c: each
 * level of their subtree, one fill per level). The caller zeroes the
 * metadata first, so formatting an 8 GiB heap is one memset plus about fifty
 * small writes and fills.
 * dm_heap_read_stats() folds per-arena counters into devmalloc_stats_t.
 *
 * Locking: none; a heap must not be in use while it is formatted.
 */
#include <string.h>
#include "dm_internal.h"
#include "devmalloc.h"

#define ALIGN_UP(x, a) (((x) + (a)-1) / (a) * (a))

/* devmalloc_stats_t reports every class, one entry each. */
_Static_assert(DEVMALLOC_NUM_CLASSES == DM_NUM_CLASSES, "public class count differs from the core's");
_Static_assert(sizeof(dm_chunk_t) == 128, "a chunk descriptor is one 128-byte line");

/* Slot geometry of every class (see sizeclass.c for the class sizes). A
 * chunk's bitmap takes a word per 64 slots. The classes from DM_SIDE_CLASS
 * (320 B and up, at most 64 * DM_SIDE_WORDS slots) keep it beside the
 * chunk, in its descriptor (chunk.h: chunk_bitmap), and their slots start at
 * the chunk's first byte: 128 slots of 1 KiB, 32 of 4 KiB, whole warps'
 * worth; with the bitmap in the chunk they had one slot fewer, and each
 * chunk's last 32-lane request spilled a lane into another chunk, in the
 * slow path (docs/decisions.md, "Slot bitmaps in the chunk descriptor";
 * chunk.h says why 256 B stays in the chunk, at 511 slots). The smaller
 * classes keep it at the chunk's start, below the first
 * slot, whose offset is chosen per class: of the offsets up to
 * DM_SLAB_ALIGN_MAX that leave room for the bitmap, the largest with the
 * most slots; a power-of-two class takes only multiples of
 * min(size, DM_SLAB_ALIGN_MAX), so that its slots keep that alignment
 * (aligned requests use those classes). Every slot is served, those at
 * 16 KiB-aligned addresses too: free() asks the chunk's tag before it takes
 * such an address for a large block (devmalloc.cu, single.c). */
void dm_classes_compute(dm_class_t out[DM_NUM_CLASSES]) {
  for (uint32_t c = 0; c < DM_NUM_CLASSES; c++) {
    uint32_t size = dm_class_size(c), pow2 = (size & (size - 1u)) == 0;
    uint32_t step = pow2 && size < DM_SLAB_ALIGN_MAX ? size
                    : pow2                           ? DM_SLAB_ALIGN_MAX
                    : size % DM_SECTOR_BYTES == 0    ? DM_SECTOR_BYTES /* slots on sector boundaries */
                                                     : DM_MIN_ALIGN;
    dm_class_t best = {0}, cand = {size, 0, 0, (uint32_t)(DM_CHUNK_BYTES / size), 0xffffffffu / size + 1u};
    if (dm_class_beside(c)) { /* offset 0 */
      out[c] = cand;
      continue;
    }
    for (uint32_t off = step; off <= DM_SLAB_ALIGN_MAX; off += step) {
      cand.off = (uint16_t)off;
      cand.nslots = (uint32_t)((DM_CHUNK_BYTES - off) / size);
      /* the bitmap below the first slot, and no fewer slots */
      if (off < dm_class_words(&cand) * 8u || cand.nslots < best.nslots) continue;
      best = cand;
    }
    out[c] = best;
  }
}

/* Arenas for a heap on a GPU with `sms` SMs: DM_ARENAS_PER_SM per SM, but no
 * more than one per DM_ARENA_CHUNKS chunks of the heap. Every (arena, class)
 * bin holds chunks of its own; in a small heap thousands of bins would each
 * hold a partly used chunk, and a class runs dry while the others' chunks
 * have room (mixed sizes filled a 256 MiB heap to 38% with 528 arenas). The
 * divisor, 72, was four chunks for each of the 18 classes there were when
 * arena counts were measured (more arenas ran faster, fewer stranded less);
 * it is a constant so that the finer classes leave every heap the arenas it
 * had rather than fewer.
 * A heap with room for at least three quarters of the per-SM arenas gets
 * all of them (54 chunks or more per arena): a warp's arena is its SM's
 * slot modulo the count (counters.c: dm_heap_arena), so with fewer arenas
 * than slots some SMs' warps share their bins with others', at twice the
 * traffic of the rest, and set the pace (docs/decisions.md, "All the arenas
 * a heap has room for"). Not from half: a 2.3 GiB heap would then have as
 * many bins as 0.86 of its chunks (31 classes x 528), where the divisor
 * keeps that to 0.43. */
uint32_t dm_arenas_for(uint64_t heap_bytes, uint32_t sms) {
  uint64_t most = (uint64_t)(sms ? sms : 1) * DM_ARENAS_PER_SM;
  uint64_t fit = (heap_bytes >> DM_CHUNK_SHIFT) / DM_ARENA_CHUNKS;
  uint64_t n = fit * 4 >= most * 3 ? most : fit;
  if (n > DM_MAX_ARENAS) n = DM_MAX_ARENAS;
  return n ? (uint32_t)n : 1u;
}

/* Ways of each bin (slab.c, "Ways"): about as many as the warp slots that
 * share an arena, DM_WAY_SLOTS / narenas, a power of two from 1 to
 * DM_BIN_WAYS. A heap with about an arena per warp slot (4 GiB and up with
 * 132 SMs) keeps one way per bin; a 64 MiB heap, 7 arenas, keeps 8. */
uint32_t dm_ways_for(uint32_t narenas) {
  uint32_t w = 1;
  while (w < DM_BIN_WAYS && (uint64_t)narenas * w * 2 <= DM_WAY_SLOTS) w *= 2;
  return w;
}

static uint32_t top_for(uint64_t pool) {
  uint64_t leaves = pool >> DM_LEAF_SHIFT;
  uint32_t top = 0;
  while ((1ull << top) < leaves) top++;
  return top;
}

static void layout_for_pool(uint64_t pool, uint32_t narenas, dm_layout_t *L) {
  memset(L, 0, sizeof *L);
  L->pool_bytes = pool;
  L->top = top_for(pool);
  L->narenas = narenas;
  L->nodes = 2ull << L->top;
  for (uint32_t h = 0; h <= L->top; h++) {
    uint64_t words = ((1ull << (L->top - h)) + 63) / 64;
    L->avail_words += words + (words + 63) / 64; /* bitmap and its summary */
  }
  L->nchunks = pool >> DM_CHUNK_SHIFT;
  uint64_t o = ALIGN_UP(pool, 256);
  L->state_off = o;
  o = ALIGN_UP(o + L->nodes * 4, 256);
  L->lock_off = o;
  o = ALIGN_UP(o + L->nodes * 4, 256);
  L->avail_off = o;
  o = ALIGN_UP(o + L->avail_words * 8, 256);
  L->sem_off = o;
  o = ALIGN_UP(o + (uint64_t)(L->top + 1) * sizeof(dm_sem_t), 256);
  L->chunk_off = o;
  o = ALIGN_UP(o + L->nchunks * sizeof(dm_chunk_t), 256);
  L->bin_off = o;
  o = ALIGN_UP(o + (uint64_t)narenas * DM_NUM_CLASSES * sizeof(dm_bin_t), 256);
  L->ways_off = o;
  o = ALIGN_UP(o + (uint64_t)narenas * DM_NUM_CLASSES * (dm_ways_for(narenas) - 1) * sizeof(dm_way_t), 256);
  if (dm_ways_for(narenas) > 1 && pool >= DM_HINT_POOL_MIN) { /* 0: none (slab.c, "Slot hints") */
    L->shint_off = o;
    o = ALIGN_UP(o + DM_HINT_BYTES, 256);
  }
  L->astats_off = o;
  o = ALIGN_UP(o + (uint64_t)narenas * sizeof(dm_arena_stats_t), 256);
  L->hstats_off = o;
  o = ALIGN_UP(o + sizeof(dm_heap_stats_t), 256);
  L->heap_off = o;
  o = ALIGN_UP(o + sizeof(dm_heap_t), 256);
  L->grow_off = o;
  o = ALIGN_UP(o + sizeof(dm_grow_t), 256);
  L->fresh_off = o;
  o = ALIGN_UP(o + sizeof(dm_fresh_t), 256);
  uint64_t slots = 0;
  /* A ring of up to DM_CACHE_SLOTS slots (a power of two, at most the
   * order's blocks); for an order of more blocks than that, up to
   * DM_CACHE_WHOLE, a slot for every block (a power of two), and then no
   * reservation (`bwhole`, blockcache.c). Not for smaller orders: a small
   * pool would then cache all its freed blocks and merge none back into
   * the tree until a request the tree cannot serve flushes them
   * (docs/decisions.md, "Block cache"). */
  L->bwhole = 0;
  for (uint32_t c = 0; c < DM_CACHE_ORDERS; c++) {
    uint64_t bs = 1ull << (DM_LEAF_SHIFT + c), blocks = pool >> (DM_LEAF_SHIFT + c),
             most = (pool + bs - 1) / bs;
    uint64_t cap = 0, whole = 1;
    while (whole < most) whole *= 2;
    if (blocks > DM_CACHE_SLOTS && whole <= DM_CACHE_WHOLE) {
      cap = whole;
      L->bwhole |= 1u << c;
    } else if (blocks) {
      for (cap = 1; cap * 2 <= blocks && cap * 2 <= DM_CACHE_SLOTS; cap *= 2) {}
    }
    L->bcap[c] = (uint32_t)cap;
    slots += cap;
  }
  L->bcache_off = o;
  o = ALIGN_UP(o + DM_CACHE_ORDERS * sizeof(dm_bcache_t), 256);
  L->bslot_off = o;
  o = ALIGN_UP(o + slots * 4, 256);
  L->total = o;
}

/* Largest heap a layout can describe: the buddy tree has DM_MAX_ORDERS
 * orders and chunks are counted in 32 bits. */
uint64_t dm_layout_max_bytes(void) {
  uint64_t by_orders = 1ull << (DM_LEAF_SHIFT + DM_MAX_ORDERS - 1);
  uint64_t by_chunks = (uint64_t)UINT32_MAX << DM_CHUNK_SHIFT;
  return by_orders < by_chunks ? by_orders : by_chunks;
}

/* Largest pool (a multiple of the leaf) whose metadata fits beside it.
 * Returns 0, or -1 when heap_bytes is too small to hold one chunk or larger
 * than dm_layout_max_bytes(). */
int dm_layout_compute(uint64_t heap_bytes, uint32_t narenas, dm_layout_t *L) {
  if (narenas == 0 || narenas > DM_MAX_ARENAS) return -1;
  if (heap_bytes > dm_layout_max_bytes()) return -1;
  uint64_t leaf = 1ull << DM_LEAF_SHIFT;
  uint64_t pool = heap_bytes / leaf * leaf;
  while (pool >= DM_CHUNK_BYTES) {
    layout_for_pool(pool, narenas, L);
    if (L->total <= heap_bytes) {
      L->total = heap_bytes;
      return 0;
    }
    uint64_t over = ALIGN_UP(L->total - heap_bytes, leaf);
    pool = pool > over ? pool - over : 0;
  }
  return -1;
}

/* A heap that grows: a pool of max_pool bytes (rounded down to the growth
 * granule) of which only a prefix is ever mapped, metadata after it (always
 * mapped). L->total is the end of the metadata (the caller reserves it
 * rounded up to the granule). Returns -1 when the pool holds no granule or
 * the layout cannot describe it. */
int dm_layout_compute_grow(uint64_t max_pool, uint32_t narenas, dm_layout_t *L) {
  if (narenas == 0 || narenas > DM_MAX_ARENAS) return -1;
  uint64_t pool = max_pool / DM_GROW_BYTES * DM_GROW_BYTES;
  if (pool < DM_GROW_BYTES || pool > dm_layout_max_bytes() / 2) return -1;
  layout_for_pool(pool, narenas, L);
  L->grows = 1;
  return 0;
}

void dm_heap_build(const dm_layout_t *L, uint64_t base, uint64_t heap_bytes, dm_heap_t *h) {
  memset(h, 0, sizeof *h);
  h->magic = DM_HEAP_MAGIC;
  h->heap_bytes = heap_bytes;
  h->buddy.state = (uint32_t *)(uintptr_t)(base + L->state_off);
  h->buddy.lock = (uint32_t *)(uintptr_t)(base + L->lock_off);
  h->buddy.avail = (uint64_t *)(uintptr_t)(base + L->avail_off);
  h->buddy.sem = (dm_sem_t *)(uintptr_t)(base + L->sem_off);
  uint64_t w = 0;
  for (uint32_t o = 0; o <= L->top; o++) {
    h->buddy.word_off[o] = w;
    w += ((1ull << (L->top - o)) + 63) / 64;
  }
  for (uint32_t o = 0; o <= L->top; o++) {
    h->buddy.sum_off[o] = w;
    w += (((1ull << (L->top - o)) + 63) / 64 + 63) / 64;
  }
  h->buddy.top = L->top;
  h->buddy.base = (char *)(uintptr_t)base;
  h->buddy.pool_bytes = L->pool_bytes;
  h->chunks = (dm_chunk_t *)(uintptr_t)(base + L->chunk_off);
  h->bins = (dm_bin_t *)(uintptr_t)(base + L->bin_off);
  h->astats = (dm_arena_stats_t *)(uintptr_t)(base + L->astats_off);
  h->hstats = (dm_heap_stats_t *)(uintptr_t)(base + L->hstats_off);
  h->buddy.moving = &h->hstats->moving;
  h->narenas = L->narenas;
  h->way_mask = dm_ways_for(L->narenas) - 1;
  h->round = DM_SECTOR_BYTES - 1;
  h->ways = h->way_mask ? (dm_way_t *)(uintptr_t)(base + L->ways_off) : NULL;
  h->shints = L->shint_off ? (uint32_t *)(uintptr_t)(base + L->shint_off) : NULL;
  h->nchunks = (uint32_t)L->nchunks;
  dm_classes_compute(h->classes);
  h->bcache = (dm_bcache_t *)(uintptr_t)(base + L->bcache_off);
  h->bslots = (uint32_t *)(uintptr_t)(base + L->bslot_off);
  for (uint32_t c = 0, n = 0; c < DM_CACHE_ORDERS; n += L->bcap[c], c++) {
    h->bcap[c] = L->bcap[c];
    h->bbase[c] = n;
  }
  h->bwhole = L->bwhole;
  h->fresh = (dm_fresh_t *)(uintptr_t)(base + L->fresh_off);
  h->fresh_end = L->grows ? 0 : L->nchunks; /* every chunk of a fixed heap starts fresh */
  if (L->grows) h->grow = (dm_grow_t *)(uintptr_t)(base + L->grow_off);
}

/* What formatting writes besides node states: the AVAIL bits, merged per
 * bitmap word (nodes of one order on the pool's boundary may share one),
 * and the count of AVAIL nodes per order. */
typedef struct {
  uint64_t index[4 * DM_MAX_ORDERS], bits[4 * DM_MAX_ORDERS];
  uint32_t n;
  uint32_t sem_count[DM_MAX_ORDERS];
} format_acc_t;

static void acc_bit(format_acc_t *a, uint64_t index, uint64_t bit) {
  for (uint32_t k = 0; k < a->n; k++)
    if (a->index[k] == index) {
      a->bits[k] |= bit;
      return;
    }
  a->index[a->n] = index;
  a->bits[a->n++] = bit;
}

/* The fresh subtree under node i of `order`: every node SPLIT down to the
 * chunk order, whose nodes are CACHED (kept: fresh.c hands them out). A
 * level's nodes are contiguous: one fill each. */
static void format_fresh(const dm_layout_t *L, uint64_t i, uint32_t order, dm_fill32_fn fill32, void *ctx) {
  uint32_t levels = order - DM_CHUNK_ORDER;
  for (uint32_t d = 0; d <= levels; d++)
    fill32(ctx, L->state_off + (i << d) * 4, d == levels ? DM_NODE_CACHED : DM_NODE_SPLIT, 1ull << d);
}

/* Node i of order `order` covers [start, start + size). Write the initial
 * state of the nodes that are not BUSY (zero): inside [0, fresh) -> the
 * fresh subtree; fully inside the pool with a parent that is not, past the
 * fresh chunks -> AVAIL; straddling the pool's end or the fresh chunks' ->
 * SPLIT. */
static void format_node(const dm_layout_t *L, const dm_heap_t *h, uint64_t i, uint32_t order, uint64_t start,
                        uint64_t fresh, dm_write_fn write, dm_fill32_fn fill32, void *ctx,
                        format_acc_t *acc) {
  uint64_t size = 1ull << (order + DM_LEAF_SHIFT);
  if (start >= L->pool_bytes) return;
  if (start + size <= fresh) {
    format_fresh(L, i, order, fill32, ctx);
    return;
  }
  uint32_t st;
  if (start + size <= L->pool_bytes && start >= fresh) {
    st = DM_NODE_AVAIL;
    uint64_t rank = i - (1ull << (L->top - order)), bit, sbit;
    uint64_t word = dm_avail_index(&h->buddy, order, rank, &bit);
    uint64_t sum = dm_summary_index(&h->buddy, order, rank, &sbit);
    acc_bit(acc, word, bit);
    acc_bit(acc, sum, sbit);
    acc->sem_count[order]++;
  } else {
    st = DM_NODE_SPLIT;
    format_node(L, h, 2 * i, order - 1, start, fresh, write, fill32, ctx, acc);
    format_node(L, h, 2 * i + 1, order - 1, start + size / 2, fresh, write, fill32, ctx, acc);
  }
  write(ctx, L->state_off + i * 4, &st, 4);
}

/* fresh: the pool's chunks start fresh (fresh.c) as dm_heap_build says, as
 * a fixed heap's do on the GPU; 0: the whole pool in the tree (the core's
 * tests of the tree). */
void dm_heap_format(const dm_layout_t *L, const dm_heap_t *h, dm_write_fn write, dm_fill32_fn fill32,
                    void *ctx, int fresh) {
  format_acc_t acc;
  memset(&acc, 0, sizeof acc);
  dm_heap_t img = *h;
  if (!fresh) img.fresh_end = 0;
  format_node(L, &img, 1, L->top, 0, img.fresh_end << DM_CHUNK_SHIFT, write, fill32, ctx, &acc);
  for (uint32_t k = 0; k < acc.n; k++) write(ctx, L->avail_off + acc.index[k] * 8, &acc.bits[k], 8);
  for (uint32_t o = 0; o <= L->top; o++) {
    if (!acc.sem_count[o]) continue;
    dm_sem_t s = {dm_semw_pack(acc.sem_count[o], 0, 0)};
    write(ctx, L->sem_off + (uint64_t)o * sizeof(dm_sem_t), &s, sizeof s);
  }
  write(ctx, L->heap_off, &img, sizeof img);
}

/* Format a heap that grows: every node above the granule's order that
 * meets the pool is SPLIT (one fill per tree level: a level's nodes are
 * contiguous), granules stay BUSY (zero: held by the grower), no order has
 * an available node, nothing is released. The caller zeroes the metadata
 * first and sets h->ghost and the grow_* knobs in h before. */
void dm_heap_format_grow(const dm_layout_t *L, const dm_heap_t *h, dm_write_fn write, dm_fill32_fn fill32,
                         void *ctx) {
  for (uint32_t d = 0; d + DM_GROW_ORDER < L->top; d++) {
    uint64_t size = 1ull << (L->top - d + DM_LEAF_SHIFT);
    uint64_t count = (L->pool_bytes + size - 1) / size;
    fill32(ctx, L->state_off + (1ull << d) * 4, DM_NODE_SPLIT, count);
  }
  write(ctx, L->heap_off, h, sizeof *h);
}

void dm_heap_read_stats(const dm_heap_t *h, const dm_arena_stats_t *astats, const dm_heap_stats_t *hs,
                        struct devmalloc_stats *out) {
  memset(out, 0, sizeof *out);
  out->heap_bytes = h->heap_bytes;
  out->pool_bytes = h->buddy.pool_bytes;
  int64_t in_use = 0;
  for (uint32_t a = 0; a < h->narenas; a++) {
    const dm_arena_stats_t *s = &astats[a];
    for (uint32_t c = 0; c < DM_NUM_CLASSES; c++) {
      out->class_allocs[c] += s->class_allocs[c];
      out->allocs += s->class_allocs[c];
      out->frees += s->class_frees[c];
      in_use += (int64_t)(s->class_allocs[c] - s->class_frees[c]) * h->classes[c].size;
    }
    out->large_allocs += s->large_allocs;
    out->allocs += s->large_allocs;
    out->frees += s->large_frees;
    out->failures += s->failures;
    in_use += (int64_t)s->large_bytes;
  }
  for (uint32_t c = 0; c < DM_NUM_CLASSES; c++) out->class_size[c] = h->classes[c].size;
  out->bytes_in_use = in_use > 0 ? (uint64_t)in_use : 0;
  out->double_frees = hs->double_frees;
  out->foreign_frees = hs->foreign_frees;
  out->peak_bytes = hs->peak;
  out->check_failures = hs->check_failures;
  out->check_first_bad = hs->check_first_bad;
  out->check_first_size = hs->check_first_size;
}
