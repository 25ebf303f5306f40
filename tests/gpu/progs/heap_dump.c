/*
 * heap_dump.c — print what a heap's metadata says is held, waited for or
 * inconsistent: the reclaim pass's state, per tree order the semaphore and
 * the AVAIL nodes against their bitmaps and summaries, locked nodes and
 * cached blocks, the bins that are locked or have expected, reserved or
 * missing units (with their lists), and the slab chunks' flags. For a copy
 * taken while a kernel runs (dm_hangdump.cu), so nothing here assumes the
 * heap is at rest; host only.
 */
#include <stdio.h>
#include "dm_internal.h"
#include "chunk.h"
#include "heap_dump.h"

static uint64_t rank_of(uint64_t i) { return i - (1ull << (63 - __builtin_clzll(i))); }

static void dump_tree(const dm_heap_t *h, FILE *f) {
  const dm_buddy_t *b = &h->buddy;
  for (uint32_t o = 0; o <= b->top; o++) {
    uint64_t first = 1ull << (b->top - o);
    uint64_t avail = 0, no_bit = 0, stray_bit = 0, no_sum = 0, locked = 0, cached = 0;
    for (uint64_t i = first; i < 2 * first; i++) {
      uint64_t bit, w = dm_avail_index(b, o, rank_of(i), &bit);
      int has = (b->avail[w] & bit) != 0, av = b->state[i] == DM_NODE_AVAIL;
      avail += av;
      no_bit += av && !has;
      stray_bit += has && !av;
      locked += b->lock[i] != 0;
      cached += b->state[i] == DM_NODE_CACHED;
      if (has) {
        uint64_t sbit, sw = dm_summary_index(b, o, rank_of(i), &sbit);
        no_sum += (b->avail[sw] & sbit) == 0;
      }
    }
    uint64_t sw = b->sem[o].w;
    if (avail || locked || cached || no_bit || stray_bit || no_sum || dm_semw_c(sw) || dm_semw_e(sw) ||
        dm_semw_r(sw))
      fprintf(f,
              "DUMP order %2u: sem C %d E %u R %u | AVAIL %llu (bit clear %llu), bits without "
              "AVAIL %llu, bits without summary %llu, locked %llu, cached %llu\n",
              o, dm_semw_c(sw), dm_semw_e(sw), dm_semw_r(sw), (unsigned long long)avail,
              (unsigned long long)no_bit, (unsigned long long)stray_bit, (unsigned long long)no_sum,
              (unsigned long long)locked, (unsigned long long)cached);
  }
}

/* Bins that are locked, or whose semaphore has expected or reserved units or
 * is below zero: the first `most` of them with their ways' lists. */
static void dump_bins(const dm_heap_t *h, FILE *f, uint32_t most) {
  uint32_t nb = h->narenas * DM_NUM_CLASSES, locked = 0, busy = 0;
  for (uint32_t k = 0; k < nb; k++) {
    dm_bin_t *bin = &h->bins[k];
    uint64_t w = bin->sem.w;
    uint32_t locks = 0;
    for (uint32_t y = 0; y <= h->way_mask; y++) locks += bin_way(h, bin, y)->lock != 0;
    locked += locks != 0;
    if (!dm_semw_e(w) && !dm_semw_r(w) && dm_semw_c(w) >= 0 && !locks) continue;
    if (busy++ >= most) continue;
    uint32_t cls = k % DM_NUM_CLASSES, cap = h->classes[cls].nslots;
    fprintf(f, "DUMP bin arena %u class %u (%u B, cap %u): C %d E %u R %u grows %u\n", k / DM_NUM_CLASSES,
            cls, h->classes[cls].size, cap, dm_semw_c(w), dm_semw_e(w), dm_semw_r(w), bin->grows);
    for (uint32_t y = 0; y <= h->way_mask; y++) {
      const dm_way_t *wy = bin_way(h, bin, y);
      uint32_t listed = 0, room = 0;
      for (uint32_t c = wy->head; c && c <= h->nchunks && listed <= h->nchunks;
           c = h->chunks[c - 1].next, listed++)
        room += live_used(h->chunks[c - 1].live) < cap;
      uint64_t hv = wy->hint && wy->hint <= h->nchunks ? h->chunks[wy->hint - 1].live : 0;
      fprintf(f,
              "DUMP   way %u: lock %u head %u hint %u (tag %u used %u) pending %u; "
              "%u listed, %u with room\n",
              y, wy->lock, wy->head, wy->hint, (unsigned)(hv >> 32), live_used(hv), wy->pending, listed,
              room);
    }
  }
  uint32_t slab = 0, empty = 0, flagged = 0, over = 0;
  for (uint32_t i = 0; i < h->nchunks; i++) {
    uint64_t v = h->chunks[i].live;
    uint32_t tag = (uint32_t)(v >> 32);
    if (!tag) continue;
    slab++;
    empty += live_used(v) == 0;
    flagged += (v & DM_LIVE_PEND) != 0;
    over += live_used(v) > h->classes[tag_class(tag)].nslots;
  }
  fprintf(f,
          "DUMP bins locked %u, bins with expected/reserved/negative units %u; slab chunks %u, "
          "empty %u, re-list flag %u, count above cap %u\n",
          locked, busy, slab, empty, flagged, over);
}

void dm_heap_dump(const dm_heap_t *h, FILE *f) {
  const dm_heap_stats_t *s = h->hstats;
  fprintf(f,
          "DUMP reclaim gen %llu state %llu next %llu done %llu chunks %llu; cached mark %llu; "
          "footprint %llu MiB of %llu MiB; adoption cursor %llu\n",
          (unsigned long long)(s->reclaim >> 2), (unsigned long long)(s->reclaim & 3),
          (unsigned long long)s->reclaim_next, (unsigned long long)s->reclaim_done,
          (unsigned long long)s->reclaim_chunks, (unsigned long long)s->cached,
          (unsigned long long)(s->footprint >> 20), (unsigned long long)(h->buddy.pool_bytes >> 20),
          (unsigned long long)s->adopt_next);
  dump_tree(h, f);
  dump_bins(h, f, 25);
  char why[200] = "";
  int bad = dm_heap_check(h, why, sizeof why);
  fprintf(f,
          "DUMP dm_heap_check: %d findings%s%s (locks, units and flags in flight are expected "
          "while a kernel runs)\n",
          bad, bad ? "; first: " : "", why);
}
