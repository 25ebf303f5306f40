/* test_slab.c — size classes, chunk geometry, bin bookkeeping, stealing
 * between arenas, empty chunks adopted by other bins, small requests served
 * by their group's first bin, the fast grant, and free dispatch by
 * alignment. */
#include "test_common.h"
#include "chunk.h"
#include <pthread.h>
#include <unistd.h>

#define MiB (1ull << 20)

static void test_class_mapping(void **st) {
  dm_class_t cl[DM_NUM_CLASSES];
  dm_classes_compute(cl);
  for (uint64_t s = 1; s <= DM_SLAB_MAX; s++) {
    int c = dm_class_of(s, 16);
    assert_true(c >= 0 && c < (int)DM_NUM_CLASSES);
    assert_true(cl[c].size >= s);
    assert_int_equal(cl[c].size % 16, 0);
    if (c > 0) assert_true(cl[c - 1].size < s);                         /* the smallest class that fits */
    if (s > 32) assert_true(cl[c].size * 2 <= s * 3 + 32);              /* at most 1.5x rounding */
    if (s > 64 && s <= 4096) assert_true(cl[c].size * 4 < s * 5);       /* under 25% */
    if (s >= 16 && (s & (s - 1)) == 0) assert_int_equal(cl[c].size, s); /* a power of two: its own class */
  }
  assert_int_equal(dm_class_of(DM_SLAB_MAX + 1, 16), -1);
  assert_int_equal(cl[dm_class_of(24, 16)].size, 32);
  assert_int_equal(cl[dm_class_of(65, 16)].size, 80);
  assert_int_equal(cl[dm_class_of(100, 16)].size, 112);
  assert_int_equal(cl[dm_class_of(200, 16)].size, 224);
  assert_int_equal(cl[dm_class_of(3000, 16)].size, 3072);
  assert_int_equal(cl[dm_class_of(4097, 16)].size, 6144); /* no 5 KiB class */
  assert_int_equal(cl[dm_class_of(5000, 16)].size, 6144);
  assert_int_equal(cl[dm_class_of(6145, 16)].size, 7168);
  /* Aligned requests take a power-of-two class >= the alignment. */
  assert_int_equal(cl[dm_class_of(40, 64)].size, 64);
  assert_int_equal(cl[dm_class_of(80, 32)].size, 128);
  assert_int_equal(cl[dm_class_of(100, 256)].size, 256);
  assert_int_equal(cl[dm_class_of(3000, 1024)].size, 4096);
  assert_int_equal(dm_class_of(16, 2048), -1); /* beyond a slot's alignment */
  for (uint64_t a = 32; a <= 1024; a *= 2)
    for (uint64_t s = 1; s <= DM_SLAB_MAX; s++) {
      int c = dm_class_of(s, a);
      uint64_t want = s < a ? a : s, p = 1;
      while (p < want) p *= 2;
      assert_int_equal(cl[c].size, p); /* the smallest power of two >= max(size, align) */
    }
}

/* The class table: increasing multiples of 16 up to the largest slab request,
 * each class's number fits the 5 bits of a chunk's tag, and a tag never is 0
 * and gives back its arena and class. */
static void test_class_table_and_tags(void **st) {
  dm_class_t cl[DM_NUM_CLASSES];
  dm_classes_compute(cl);
  assert_true(DM_NUM_CLASSES <= 32);
  for (uint32_t c = 0; c < DM_NUM_CLASSES; c++) {
    assert_int_equal(cl[c].size % 16, 0);
    if (c > 0) assert_true(cl[c].size > cl[c - 1].size);
    assert_int_equal(dm_class_of(cl[c].size, 16), (int)c);
  }
  assert_int_equal(cl[DM_NUM_CLASSES - 1].size, DM_SLAB_MAX);
  uint32_t arenas[] = {0, 1, 7, DM_MAX_ARENAS - 1};
  for (size_t i = 0; i < sizeof arenas / sizeof arenas[0]; i++)
    for (uint32_t c = 0; c < DM_NUM_CLASSES; c++) {
      uint32_t tag = make_tag(arenas[i], c);
      assert_int_not_equal(tag, 0);
      assert_int_equal(tag_class(tag), c);
      assert_int_equal(tag_arena(tag), arenas[i]);
    }
}

static void test_chunk_geometry(void **st) {
  dm_class_t cl[DM_NUM_CLASSES];
  dm_classes_compute(cl);
  for (uint32_t c = 0; c < DM_NUM_CLASSES; c++) {
    uint64_t usable = (uint64_t)cl[c].nslots * cl[c].size;
    /* Every class uses at least 90% of its chunk (the paper's 2 KiB class used half). */
    assert_true(usable * 100 >= DM_CHUNK_BYTES * 90);
    assert_true(cl[c].nslots <= DM_CHUNK_WORDS * 64);
  }
  /* From 320 B up the bitmap lies beside the chunk: whole chunks of slots,
   * those on 16 KiB boundaries too. Below, it takes the first slots. */
  static const struct {
    uint32_t size, cap;
  } want[] = {{256, 511}, {320, 409},  {512, 256}, {1024, 128}, {2048, 64}, {4096, 32},
              {8192, 16}, {128, 1023}, {16, 8128}, {2560, 51},  {3072, 42}, {1536, 85}};
  for (size_t k = 0; k < sizeof want / sizeof want[0]; k++)
    if (cl[dm_class_of(want[k].size, 16)].nslots != want[k].cap)
      fail_msg("%u B: %u slots, not %u", want[k].size, cl[dm_class_of(want[k].size, 16)].nslots, want[k].cap);
}

/* Each class's first slot lies past its bitmap (or at the chunk's start when
 * the bitmap lies beside the chunk), its slots end inside the
 * chunk, and a power-of-two class's slots keep the alignment aligned
 * requests are promised (min(size, 1024)). */
static void test_class_offsets(void **st) {
  dm_class_t cl[DM_NUM_CLASSES];
  dm_classes_compute(cl);
  for (uint32_t c = 0; c < DM_NUM_CLASSES; c++) {
    uint32_t size = cl[c].size, off = cl[c].off;
    uint32_t words = dm_class_words(&cl[c]);
    assert_true(words <= DM_CHUNK_WORDS);
    /* beside the chunk from DM_SIDE_CLASS, which must fit there */
    if (c >= DM_SIDE_CLASS)
      assert_true(off == 0 && words <= DM_SIDE_WORDS);
    else
      assert_true(off >= words * 8u && off > 0);
    assert_true(off <= DM_SLAB_ALIGN_MAX);
    assert_int_equal(off % DM_MIN_ALIGN, 0);
    assert_true((uint64_t)off + (uint64_t)cl[c].nslots * size <= DM_CHUNK_BYTES);
    assert_true((uint64_t)off + (uint64_t)(cl[c].nslots + 1u) * size > DM_CHUNK_BYTES);
    if ((size & (size - 1u)) == 0)
      assert_int_equal(off % (size < DM_SLAB_ALIGN_MAX ? size : DM_SLAB_ALIGN_MAX), 0);
  }
}

/* The free path's division by multiplication is exact for every class and
 * every offset a chunk has. */
static void test_class_div_exact(void **st) {
  dm_class_t cl[DM_NUM_CLASSES];
  dm_classes_compute(cl);
  for (uint32_t c = 0; c < DM_NUM_CLASSES; c++)
    for (uint32_t x = 0; x < DM_CHUNK_BYTES; x++)
      if (dm_class_div(&cl[c], x) != x / cl[c].size)
        fail_msg("class %u (%u B): %u / size gives %u", c, cl[c].size, x, dm_class_div(&cl[c], x));
}

/* Aligned requests get aligned slots, however far into a chunk: every
 * alignment from 32 to 1024 with sizes below, at and above it, 300 each. */
static void test_aligned_slots(void **st) {
  fixture_heap_t f;
  fixture_heap_init(&f, 16 * MiB, 1);
  static void *p[300];
  for (uint64_t a = 32; a <= DM_SLAB_ALIGN_MAX; a *= 2) {
    uint64_t sizes[] = {1, a / 2 + 16, a, a + 16, 3 * a};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
      for (int i = 0; i < 300; i++) {
        p[i] = dm_malloc(f.h, sizes[k], a);
        assert_non_null(p[i]);
        if ((uintptr_t)p[i] % a)
          fail_msg("align %lu size %lu: %p", (unsigned long)a, (unsigned long)sizes[k], p[i]);
      }
      for (int i = 0; i < 300; i++) assert_int_equal(dm_free(f.h, p[i]), DM_FREE_OK);
    }
  }
  fixture_assert_consistent(&f);
  fixture_heap_fini(&f);
}

/* A class whose bitmap lies beside its chunks (1 KiB: 128 slots) fills a
 * chunk from its first byte to its last, and the blocks' owners may write
 * every byte of it: the allocator's state is elsewhere. Half the slots,
 * freed and asked for again, come back exactly, and no slot twice; the
 * heap check reads that bitmap. */
static void test_side_bitmap_fills_chunk(void **st) {
  fixture_heap_t f;
  fixture_heap_init(&f, 8 * MiB, 1);
  enum { SZ = 1024, N = DM_CHUNK_BYTES / SZ };
  uint32_t cls = (uint32_t)dm_class_of(SZ, 16), cap = f.h->classes[cls].nslots;
  assert_int_equal(cap, N);
  static char *p[N];
  char *lo = NULL;
  for (uint32_t i = 0; i < cap; i++) {
    assert_non_null(p[i] = dm_malloc(f.h, SZ, 16));
    if (!lo || p[i] < lo) lo = p[i];
  }
  assert_int_equal((uint64_t)(lo - f.h->buddy.base) % DM_CHUNK_BYTES, 0); /* the chunk's first byte */
  for (uint32_t i = 0; i < cap; i++) {
    assert_true(p[i] >= lo && p[i] < lo + DM_CHUNK_BYTES);
    memset(p[i], 0xff, SZ); /* every byte of the chunk */
  }
  fixture_assert_consistent(&f);
  char *more = dm_malloc(f.h, SZ, 16); /* the chunk is full: another one */
  assert_true(more < lo || more >= lo + DM_CHUNK_BYTES);
  for (uint32_t i = 0; i < cap; i += 2) assert_int_equal(dm_free(f.h, p[i]), DM_FREE_OK);
  /* a slot's bit set behind the count is caught */
  uint64_t *w0 = chunk_bitmap(f.h, (uint32_t)((uint64_t)(lo - f.h->buddy.base) >> DM_CHUNK_SHIFT), cls);
  char why[160] = "";
  *w0 |= 1;
  assert_true(dm_heap_check(f.h, why, sizeof why) > 0);
  assert_non_null(strstr(why, "chunk's count disagrees with its bitmap"));
  *w0 &= ~1ull;
  fixture_assert_consistent(&f);
  static uint8_t seen[N];
  memset(seen, 0, sizeof seen);
  for (uint32_t i = 0; i < cap; i += 2) {
    char *q = dm_malloc(f.h, SZ, 16);
    assert_true(q >= lo && q < lo + DM_CHUNK_BYTES);
    uint32_t k = (uint32_t)((q - lo) / SZ);
    assert_int_equal(k % 2, 0);
    assert_int_equal(seen[k]++, 0);
  }
  for (uint32_t i = 0; i < cap; i++) assert_int_equal(dm_free(f.h, p[i]), DM_FREE_OK);
  assert_int_equal(dm_free(f.h, more), DM_FREE_OK);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(f.h));
  fixture_heap_fini(&f);
}

/* Slots at 16 KiB-aligned addresses are served and free as slots (free()
 * asks the chunk's tag), a double free of one is caught, and a large block
 * (16 KiB-aligned, in no slab chunk) still frees as one. */
static void test_aligned_slots_free_as_slots(void **st) {
  fixture_heap_t f;
  fixture_heap_init(&f, 8 * MiB, 1);
  uint32_t aligned_1k = 0;
  for (uint32_t c = 0; c < DM_NUM_CLASSES; c++) {
    uint32_t size = f.h->classes[c].size, cap = f.h->classes[c].nslots;
    void **p = calloc(cap, sizeof *p);
    for (uint32_t i = 0; i < cap; i++) {
      p[i] = dm_malloc(f.h, size, 16);
      assert_non_null(p[i]);
      assert_int_equal((uintptr_t)p[i] % 16, 0);
      if (size == 1024 && (uintptr_t)p[i] % DM_DISPATCH_ALIGN == 0) aligned_1k++;
    }
    for (uint32_t i = 0; i < cap; i++) assert_int_equal(dm_free(f.h, p[i]), DM_FREE_OK);
    for (uint32_t i = 0; i < cap; i++)
      if ((uintptr_t)p[i] % DM_DISPATCH_ALIGN == 0) assert_int_equal(dm_free(f.h, p[i]), DM_FREE_DOUBLE);
    free(p);
  }
  assert_int_equal(aligned_1k, 8); /* a chunk of 1 KiB slots from its start: one per 16 KiB */
  void *big = dm_malloc(f.h, 20000, 16);
  assert_int_equal((uintptr_t)big % DM_DISPATCH_ALIGN, 0);
  assert_int_equal(dm_free(f.h, big), DM_FREE_OK);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(f.h));
  fixture_heap_fini(&f);
}

/* min_block: small requests get blocks of min_block bytes, each on a cache
 * line of its own; larger requests are unchanged; 0 turns it off. */
/* By default no two blocks share a 32-byte sector (the stock allocator's
 * property that programs reading published blocks with plain loads rely
 * on): every small size, many blocks live at once, each block's first and
 * last sector its own. Dense heaps put two 16 B blocks in one sector. */
static void test_blocks_own_their_sectors(void **st) {
  fixture_heap_t f;
  fixture_heap_init(&f, 64 * MiB, 2);
  enum { N = 6000 };
  static char *p[N];
  static uint32_t sz[N];
  uint32_t r = 99;
  for (int i = 0; i < N; i++) {
    r = r * 1664525u + 1013904223u;
    sz[i] = 1 + (r >> 8) % 300;
    p[i] = dm_malloc(f.h, sz[i], 16);
    assert_non_null(p[i]);
  }
  char **order = malloc(N * sizeof *order);
  for (int i = 0; i < N; i++) order[i] = p[i];
  for (int i = 1; i < N; i++) /* insertion sort by address */
    for (int j = i; j > 0 && order[j] < order[j - 1]; j--) {
      char *t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  for (int i = 0; i < N; i++) assert_int_equal((uintptr_t)order[i] % DM_SECTOR_BYTES, 0);
  for (int i = 0; i < N; i++) assert_int_equal(dm_free(f.h, p[i]), DM_FREE_OK);
  free(order);
  f.h->round = DM_MIN_ALIGN - 1;
  char *a = dm_malloc(f.h, 16, 16), *b = dm_malloc(f.h, 16, 16);
  assert_true((uintptr_t)a / DM_SECTOR_BYTES == (uintptr_t)b / DM_SECTOR_BYTES); /* dense: one sector */
  dm_free(f.h, a);
  dm_free(f.h, b);
  fixture_assert_consistent(&f);
  fixture_heap_fini(&f);
}

static void test_min_block(void **st) {
  fixture_heap_t f;
  fixture_heap_init(&f, 8 * MiB, 1);
  f.h->min_block = 128;
  char *p[64];
  for (int i = 0; i < 64; i++) {
    p[i] = dm_malloc(f.h, 16, 16);
    assert_non_null(p[i]);
    assert_int_equal((uintptr_t)p[i] % 128, 0);
    for (int j = 0; j < i; j++) assert_true(p[i] >= p[j] + 128 || p[j] >= p[i] + 128);
  }
  char *big = dm_malloc(f.h, 300, 16);
  assert_non_null(big);
  f.h->min_block = 0;
  f.h->round = DM_MIN_ALIGN - 1;
  char *a = dm_malloc(f.h, 16, 16), *b = dm_malloc(f.h, 16, 16);
  assert_true(b == a + 16 || a == b + 16); /* dense again */
  f.h->round = DM_SECTOR_BYTES - 1;
  for (int i = 0; i < 64; i++) assert_int_equal(dm_free(f.h, p[i]), DM_FREE_OK);
  assert_int_equal(dm_free(f.h, big), DM_FREE_OK);
  assert_int_equal(dm_free(f.h, a), DM_FREE_OK);
  assert_int_equal(dm_free(f.h, b), DM_FREE_OK);
  fixture_assert_consistent(&f);
  fixture_heap_fini(&f);
}

/* The chunk index of a slab pointer. */
static uint32_t chunk_of(const dm_heap_t *h, const void *p) {
  return (uint32_t)((uint64_t)((const char *)p - h->buddy.base) >> DM_CHUNK_SHIFT);
}

/* The calling thread's way of bin b (as slab.c picks it). */
static dm_way_t *my_way(const dm_heap_t *h, dm_bin_t *b) { return bin_way(h, b, bin_way_index(h)); }

/* The fast grant passes a full hint for the chunk after it in the list, as
 * the full grant does, and moves the hint there: a bin whose chunks a few
 * warps fill (1 KiB: 4 warps a chunk) sent every warp that met a full hint
 * down the long path. One way (300 arenas), so that the list is the bin's. */
static void test_grant_fast_next(void **st) {
  fixture_heap_t f;
  fixture_heap_init(&f, 8 * MiB, 300);
  dm_heap_t *h = f.h;
  assert_int_equal(h->way_mask, 0);
  uint32_t cls = (uint32_t)dm_class_of(4096, 16), cap = h->classes[cls].nslots;
  uint32_t arena = dm_heap_arena(h); /* this thread's */
  dm_bin_t *b = bin_at(h, arena, cls);
  void *p[128];
  uint32_t n = 0;
  for (; n < cap; n++) p[n] = dm_malloc(h, 4096, 16); /* chunk A, full */
  p[n++] = dm_malloc(h, 4096, 16);                    /* a run of two: B (1 taken, the hint), C */
  uint32_t bchunk = b->way0.hint - 1, cchunk = h->chunks[bchunk].next - 1;
  assert_int_not_equal(h->chunks[bchunk].next, 0);
  for (uint32_t i = 1; i < cap; i++) p[n++] = dm_malloc(h, 4096, 16); /* B full */
  assert_int_equal(b->way0.hint, bchunk + 1);
  assert_int_equal(live_used(h->chunks[bchunk].live), cap);
  dm_resv_t rv;
  dm_resv_init(&rv, arena, cls);
  dm_grant_t g = dm_slab_grant_fast(h, &rv, 1);
  assert_int_equal(dm_popc64(g.bits), 1);
  assert_ptr_equal(g.slots, chunk_base(h, cchunk) + h->classes[cls].off);
  assert_int_equal(b->way0.hint, cchunk + 1);
  assert_int_equal(rv.units + rv.pinned + rv.drop, 0);
  p[n++] = dm_grant_slot(g, dm_ctz64(g.bits));
  for (uint32_t i = 0; i < n; i++) assert_int_equal(dm_free(h, p[i]), DM_FREE_OK);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(h));
  fixture_heap_fini(&f);
}

/* While another caller searches a way (its lock is taken), a pin that finds
 * the hint and the chunk after it full takes a chunk with room from the
 * way's re-list stack instead of waiting for that search: after a free
 * kernel the chunks that got room back are all there. Before, the caller
 * waited for the lock (here it would wait for good: alarm). One way (300
 * arenas), so that the list is the bin's. */
static void test_pin_from_stack_while_searched(void **st) {
  fixture_heap_t f;
  fixture_heap_init(&f, 8 * MiB, 300);
  dm_heap_t *h = f.h;
  uint32_t cls = (uint32_t)dm_class_of(4096, 16), cap = h->classes[cls].nslots;
  dm_bin_t *b = bin_at(h, dm_heap_arena(h), cls);
  dm_way_t *w = &b->way0;
  void *p[7 * 64];
  uint32_t n = 0;
  for (; n < 7 * cap; n++) p[n] = dm_malloc(h, 4096, 16); /* runs of 1, 2 and 4 chunks, full */
  assert_int_equal(b->held, 7);
  assert_int_equal(dm_sem_value(&b->sem), 0);
  uint32_t a = chunk_of(h, p[0]);
  uint32_t hint = w->hint, after = h->chunks[hint - 1].next;
  assert_int_equal(live_used(h->chunks[hint - 1].live), cap); /* the walk meets full chunks */
  assert_true(after == 0 || live_used(h->chunks[after - 1].live) == cap);
  assert_int_not_equal(after, a + 1);
  assert_int_equal(dm_free(h, p[0]), DM_FREE_OK); /* room in the first chunk: queued */
  assert_int_equal(w->pending, a + 1);
  alarm(30);
  way_lock(w); /* another caller searches */
  p[0] = dm_malloc(h, 4096, 16);
  way_unlock(w);
  alarm(0);
  assert_non_null(p[0]);
  assert_int_equal(chunk_of(h, p[0]), a);
  assert_int_equal(w->hint, a + 1);    /* the way's next warps start there */
  assert_int_equal(w->pending, a + 1); /* still queued: the next search lists it */
  assert_int_equal(b->held, 7);        /* no new chunk */
  for (uint32_t i = 0; i < n; i++) assert_int_equal(dm_free(h, p[i]), DM_FREE_OK);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(h));
  fixture_heap_fini(&f);
}

/* Ways: a heap of one arena has DM_BIN_WAYS of them. A thread of another
 * way than the chunk's pins the bin's units where they are (no grow while
 * the bin has room) and its way's hint follows; the bin's grows give their
 * chunks to the ways in turn; a chunk that gets room back is re-listed in
 * the way that lists it, whoever frees. */
typedef struct {
  dm_heap_t *h;
  void **p;
  uint32_t n, way;
  void *then_free; /* freed after the allocations (NULL: none) */
} ways_job_t;
static void *ways_job(void *arg) {
  ways_job_t *j = arg;
  j->way = bin_way_index(j->h);
  for (uint32_t i = 0; i < j->n; i++) j->p[i] = dm_malloc(j->h, 4096, 16);
  if (j->then_free) assert_int_equal(dm_free(j->h, j->then_free), DM_FREE_OK);
  return NULL;
}
/* Run j in a new thread whose way is not `not`: threads get their index in
 * turn, so empty threads go first until the next one's way differs. */
static void ways_other(ways_job_t *j, uint32_t not ) {
  ways_job_t probe = {j->h, NULL, 0, 0, NULL};
  pthread_t t;
  do {
    assert_int_equal(pthread_create(&t, NULL, ways_job, &probe), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
  } while (((probe.way + 1) & j->h->way_mask) == not );
  assert_int_equal(pthread_create(&t, NULL, ways_job, j), 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  assert_int_not_equal(j->way, not );
}
static void test_ways(void **st) {
  fixture_heap_t f;
  fixture_heap_init(&f, 8 * MiB, 1);
  dm_heap_t *h = f.h;
  assert_int_equal(h->way_mask + 1, DM_BIN_WAYS);
  assert_int_equal(dm_ways_for(455), 1);
  assert_int_equal(dm_ways_for(113), 4);
  assert_int_equal(dm_ways_for(7), DM_BIN_WAYS);
  uint32_t cls = (uint32_t)dm_class_of(4096, 16), cap = h->classes[cls].nslots;
  dm_bin_t *bin = &h->bins[cls];
  void *p0 = dm_malloc(h, 4096, 16), *q[128], *r[1];
  uint32_t c1 = chunk_of(h, p0); /* the bin's first grow: way 0 */
  assert_int_equal(live_way(h->chunks[c1].live), 0);
  assert_int_equal(bin_way(h, bin, 0)->hint, c1 + 1);
  ways_job_t j = {h, q, cap - 1, 0, NULL};
  ways_other(&j, 0);
  assert_int_equal(h->hstats->footprint, DM_CHUNK_BYTES); /* no grow: it pinned in c1 */
  for (uint32_t i = 0; i < cap - 1; i++) assert_int_equal(chunk_of(h, q[i]), c1);
  assert_int_equal(bin_way(h, bin, j.way)->hint, c1 + 1); /* its way followed */
  assert_int_equal(dm_sem_value(&bin->sem), 0);
  /* the bin is full: its second grow, a run of two, to ways 1 and 2; then
   * that thread frees a slot of c1, which was full: c1 is re-listed on way
   * 0's stack */
  ways_job_t g = {h, r, 1, 0, q[0]};
  ways_other(&g, 0);
  uint32_t c2 = chunk_of(h, r[0]);
  assert_int_not_equal(c2, c1);
  assert_int_equal(live_way(h->chunks[c2].live), 1);
  assert_int_equal(bin_way(h, bin, 1)->hint, c2 + 1);
  assert_int_equal(live_used(h->chunks[bin_way(h, bin, 2)->hint - 1].live), 0);
  assert_int_equal(live_way(h->chunks[bin_way(h, bin, 2)->hint - 1].live), 2);
  assert_int_equal(bin_way(h, bin, 0)->pending, c1 + 1);
  assert_int_equal(bin_way(h, bin, g.way)->pending, 0);
  fixture_assert_consistent(&f);
  assert_int_equal(dm_free(h, r[0]), DM_FREE_OK);
  assert_int_equal(dm_free(h, p0), DM_FREE_OK);
  for (uint32_t i = 1; i < cap - 1; i++) assert_int_equal(dm_free(h, q[i]), DM_FREE_OK);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(h));
  fixture_heap_fini(&f);
}

/* Slot hints: in a heap with several ways and room for them
 * (DM_HINT_POOL_MIN), a thread (a warp slot on the GPU) tries its own last
 * chunk of a class before its way's hint, so that a kernel that runs again
 * finds its slots where the last run found them; a stale one (a chunk of
 * another class now) is passed over and replaced. A smaller heap keeps none. */
typedef struct {
  dm_heap_t *h;
  void **p;
  uint32_t n;
} hint_job_t;
static void *hint_job(void *arg) {
  hint_job_t *j = arg;
  for (uint32_t i = 0; i < j->n; i++) j->p[i] = dm_malloc(j->h, 4096, 16);
  return NULL;
}
static void test_slot_hints(void **st) {
  fixture_heap_t small;
  fixture_heap_init(&small, 4 * MiB, 1);
  assert_true(small.h->way_mask > 0);
  assert_null(small.h->shints);
  fixture_heap_fini(&small);
  fixture_heap_t f;
  fixture_heap_init(&f, 64 * MiB, 1);
  dm_heap_t *h = f.h;
  assert_non_null(h->shints);
  /* 16 .. 64 B keep none (a chunk serves 64 warps and more), 80 B and up do */
  assert_null(slot_hint(h, (uint32_t)dm_class_of(64, 16)));
  assert_non_null(slot_hint(h, (uint32_t)dm_class_of(80, 16)));
  uint32_t cls = (uint32_t)dm_class_of(4096, 16), cap = h->classes[cls].nslots;
  dm_bin_t *bin = &h->bins[cls];
  void *a = dm_malloc(h, 4096, 16), *q[64], *mine, *again;
  uint32_t ca = chunk_of(h, a);
  assert_int_equal(*slot_hint(h, cls), ca + 1);
  /* another thread fills ca and starts a second chunk */
  hint_job_t j = {h, q, cap};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, hint_job, &j), 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  uint32_t c2 = chunk_of(h, q[cap - 1]), k = 0;
  assert_int_not_equal(c2, ca);
  while (chunk_of(h, q[k]) != ca) k++;
  assert_int_equal(dm_free(h, q[k]), DM_FREE_OK); /* one slot of ca free again */
  /* this thread's way points at c2, which has room; its own chunk wins */
  dm_store32(&bin_way(h, bin, bin_way_index(h))->hint, c2 + 1);
  assert_non_null(mine = dm_malloc(h, 4096, 16));
  assert_int_equal(chunk_of(h, mine), ca);
  assert_ptr_equal(mine, q[k]);
  /* a stale hint: a chunk of another class */
  void *small16 = dm_malloc(h, 16, 16);
  dm_store32(slot_hint(h, cls), chunk_of(h, small16) + 1);
  assert_non_null(again = dm_malloc(h, 4096, 16));
  assert_int_equal(dm_chunk_class(h, chunk_of(h, again)), cls);
  assert_int_equal(*slot_hint(h, cls), chunk_of(h, again) + 1);
  fixture_assert_consistent(&f);
  for (uint32_t i = 0; i < cap; i++)
    if (i != k) assert_int_equal(dm_free(h, q[i]), DM_FREE_OK);
  assert_int_equal(dm_free(h, a), DM_FREE_OK);
  assert_int_equal(dm_free(h, mine), DM_FREE_OK);
  assert_int_equal(dm_free(h, again), DM_FREE_OK);
  assert_int_equal(dm_free(h, small16), DM_FREE_OK);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(h));
  fixture_heap_fini(&f);
}

/* The pieces of a warp's room search (devmalloc.cu; the warp's parallel
 * reads need a GPU): dm_slab_room sees the free slots of the caller's bin's
 * chunks only; dm_slab_pin_found gives back what the fast path's pin took
 * beyond room, pins what fits, makes the chunk the slot's hint, and the
 * grant then serves exactly the freed slots; a chunk whose room is gone is
 * refused with nothing changed; dm_slab_pin_way pins from the caller's
 * way. */
static void test_room_search(void **st) {
  fixture_heap_t f;
  fixture_heap_init(&f, 64 * MiB, 1);
  dm_heap_t *h = f.h;
  uint32_t cls = (uint32_t)dm_class_of(1024, 16), cap = h->classes[cls].nslots;
  uint32_t arena = dm_heap_arena(h);
  dm_bin_t *bin = bin_at(h, arena, cls);
  void *p[128] = {NULL};
  assert_int_equal(cap, 128);
  for (uint32_t i = 0; i < cap; i++) assert_non_null(p[i] = dm_malloc(h, 1024, 16));
  uint32_t a = chunk_of(h, p[0]);
  for (uint32_t i = 0; i < cap; i++) assert_int_equal(chunk_of(h, p[i]), a);
  void *x = dm_malloc(h, 2048, 16);
  dm_resv_t rv;
  dm_resv_init(&rv, arena, cls);
  uint32_t tag = make_tag(arena, cls);
  assert_int_equal(dm_slab_room(h, a, tag, cap), 0);              /* full */
  assert_int_equal(dm_slab_room(h, chunk_of(h, x), tag, cap), 0); /* another class's */
  for (uint32_t i = 10; i < 15; i++) assert_int_equal(dm_free(h, p[i]), DM_FREE_OK);
  assert_int_equal(dm_slab_room(h, a, tag, cap), 5);
  assert_int_equal(dm_slab_room(h, a, make_tag(arena + 1, cls), cap), 0); /* another arena's bin */
  /* 3 units, and an over-pin of 2 on chunk a that the fast path left */
  assert_true(dm_sem_take_fast(&bin->sem, 3, 0));
  rv.units = 3;
  dm_add64(&h->chunks[a].live, 2);
  rv.chunk = a + 1;
  rv.drop = 2;
  assert_int_equal(dm_slab_pin_found(h, &rv, a), 1);
  assert_int_equal(rv.drop, 0);
  assert_int_equal(rv.pinned, 3);
  assert_int_equal(rv.units, 0);
  assert_int_equal(live_used(h->chunks[a].live), cap - 2);
  assert_int_equal(*slot_hint(h, cls), a + 1);
  dm_grant_t g = dm_slab_grant(h, &rv, 3);
  assert_int_equal(dm_popc64(g.bits), 3);
  for (int k = 0; k < 3; k++) {
    char *s = dm_grant_slot(g, dm_ctz64(g.bits));
    g.bits &= g.bits - 1;
    assert_int_equal(chunk_of(h, s), a);
    assert_true(s >= (char *)p[10] && s <= (char *)p[14]);
  }
  /* two slots left in a; a reservation of 3 pins 2 there, then none */
  dm_resv_t r2;
  dm_resv_init(&r2, arena, cls);
  assert_true(dm_sem_take_fast(&bin->sem, 2, 0));
  r2.units = 2;
  assert_int_equal(dm_slab_pin_found(h, &r2, a), 1);
  assert_int_equal(r2.pinned, 2);
  dm_resv_t r3;
  dm_resv_init(&r3, arena, cls);
  r3.units = 1; /* borrowed: given back below */
  assert_int_equal(dm_slab_pin_found(h, &r3, a), 0);
  assert_int_equal(r3.units, 1);
  assert_int_equal(r3.pinned, 0);
  assert_int_equal(live_used(h->chunks[a].live), cap);
  g = dm_slab_grant(h, &r2, 2);
  assert_int_equal(dm_popc64(g.bits), 2);
  /* the caller's way: its hint has room after a free */
  assert_int_equal(dm_free(h, p[20]), DM_FREE_OK);
  assert_true(dm_sem_take_fast(&bin->sem, 1, 0));
  dm_store32(&my_way(h, bin)->hint, a + 1);
  assert_int_equal(dm_slab_pin_way(h, &r3), 1);
  assert_int_equal(r3.chunk, a + 1);
  g = dm_slab_grant(h, &r3, 1);
  assert_ptr_equal(dm_grant_slot(g, dm_ctz64(g.bits)), p[20]);
  fixture_assert_consistent(&f);
  assert_int_equal(dm_free(h, x), DM_FREE_OK);
  for (uint32_t i = 0; i < cap; i++) assert_int_equal(dm_free(h, p[i]), DM_FREE_OK);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(h));
  fixture_heap_fini(&f);
}

/* One chunk per bin until it is full; a full chunk leaves the list (lazily,
 * when a search meets it) and comes back when a slot is freed; empty chunks
 * stay with the bin until a reclaim pass (the tree runs short) takes them
 * back. */
static void test_bin_bookkeeping(void **st) {
  fixture_heap_t f;
  fixture_heap_init(&f, 8 * MiB, 1);
  dm_heap_t *h = f.h;
  uint32_t cls = (uint32_t)dm_class_of(4096, 16), cap = h->classes[cls].nslots;
  dm_bin_t *bin = &h->bins[cls];
  void *p[128];
  for (uint32_t i = 0; i < cap; i++) p[i] = dm_malloc(h, 4096, 16);
  assert_int_equal(h->hstats->footprint, DM_CHUNK_BYTES);
  assert_int_equal(dm_sem_value(&bin->sem), 0);
  uint32_t chunk1 = my_way(h, bin)->hint - 1;
  assert_int_equal(live_used(h->chunks[chunk1].live), cap);
  bin->grows = 0; /* one chunk per grow here (runs: test_grow_runs) */
  for (uint32_t i = cap; i < 2 * cap; i++) p[i] = dm_malloc(h, 4096, 16); /* second chunk */
  assert_int_equal(bin->held, 2);
  assert_int_equal(h->hstats->footprint, 2 * DM_CHUNK_BYTES);
  uint32_t chunk2 = my_way(h, bin)->hint - 1;
  assert_int_not_equal(chunk1, chunk2);
  assert_int_equal(dm_sem_value(&bin->sem), 0);
  assert_int_equal(dm_free(h, p[0]), DM_FREE_OK); /* room in chunk 1 */
  assert_int_equal(dm_sem_value(&bin->sem), 1);
  /* the full hint (chunk 2) is passed for the next chunk of the list,
   * chunk 1, without a search: chunk 2 stays listed until one drops it */
  p[0] = dm_malloc(h, 4096, 16);
  assert_int_equal(my_way(h, bin)->hint - 1, chunk1);
  assert_true(h->chunks[chunk2].listed);
  assert_int_equal(h->hstats->footprint, 2 * DM_CHUNK_BYTES); /* no new chunk */
  assert_int_equal(dm_free(h, p[cap]), DM_FREE_OK);           /* chunk 2 has room: queued, no lock taken */
  assert_int_equal(my_way(h, bin)->pending, chunk2 + 1);
  assert_true((uint32_t)h->chunks[chunk2].live & DM_LIVE_PEND);
  assert_int_equal(dm_free(h, p[cap + 1]), DM_FREE_OK);    /* queued once */
  assert_int_equal(h->chunks[chunk2].pending, chunk1 + 1); /* chunk 1, queued when it got room */
  p[cap] = dm_malloc(h, 4096, 16); /* chunk 1 is full: the search lists chunk 2 and uses it */
  p[cap + 1] = dm_malloc(h, 4096, 16);
  assert_true(h->chunks[chunk2].listed);
  assert_int_equal(my_way(h, bin)->pending, 0);
  assert_false((uint32_t)h->chunks[chunk2].live & DM_LIVE_PEND);
  assert_int_equal(live_used(h->chunks[chunk2].live), cap);
  assert_int_equal(h->hstats->footprint, 2 * DM_CHUNK_BYTES); /* no new chunk */
  for (uint32_t i = 0; i < 2 * cap; i++) assert_int_equal(dm_free(h, p[i]), DM_FREE_OK);
  assert_int_equal(h->hstats->footprint, 2 * DM_CHUNK_BYTES); /* both kept */
  assert_int_equal(h->hstats->peak, 2 * DM_CHUNK_BYTES);
  assert_int_equal(dm_sem_value(&bin->sem), 2 * cap);
  assert_int_equal(h->hstats->cached, 1);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(h));                                 /* every block free; two chunks kept */
  for (uint32_t i = 0; i < cap; i++) p[i] = dm_malloc(h, 4096, 16); /* served by a kept chunk */
  assert_int_equal(h->hstats->footprint, 2 * DM_CHUNK_BYTES);
  for (uint32_t i = 0; i < cap; i++) assert_int_equal(dm_free(h, p[i]), DM_FREE_OK);
  assert_int_equal(dm_reclaim_chunks(h), 1);
  assert_int_equal(dm_reclaim_chunks(h), 0); /* nothing marked since */
  assert_int_equal(h->hstats->footprint, 0);
  assert_int_equal(dm_sem_value(&bin->sem), 0);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(h));
  fixture_heap_fini(&f);
}

/* A bin that keeps growing takes runs of 1, 2, 4, then 8 chunks per grow;
 * all of them are listed and served before the next grow. Once its chunks
 * went back to the tree (the bin holds none), the next grow takes one chunk
 * again. */
static void test_grow_runs(void **st) {
  fixture_heap_t f;
  fixture_heap_init_tree(&f, 16 * MiB, 1);
  dm_heap_t *h = f.h;
  uint32_t cls = (uint32_t)dm_class_of(4096, 16), cap = h->classes[cls].nslots;
  uint32_t want[] = {1, 2, 4, 8, 8}, total = 0;
  static void *p[23 * 32];
  uint32_t n = 0;
  for (uint32_t g = 0; g < 5; g++) {
    total += want[g];
    while (n < total * cap) assert_non_null(p[n++] = dm_malloc(h, 4096, 16));
    assert_int_equal(h->hstats->footprint, (uint64_t)total * DM_CHUNK_BYTES);
    assert_int_equal(h->bins[cls].grows, g + 1);
    assert_int_equal(h->bins[cls].held, total);
    fixture_assert_consistent(&f);
  }
  for (uint32_t i = 0; i < n; i++) assert_int_equal(dm_free(h, p[i]), DM_FREE_OK);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(h));
  assert_int_equal(dm_reclaim_chunks(h), 1);
  assert_int_equal(h->hstats->footprint, 0);
  assert_int_equal(h->bins[cls].held, 0);
  assert_int_equal(h->bins[cls].grows, 0);
  assert_non_null(p[0] = dm_malloc(h, 4096, 16)); /* a fresh start: one chunk, not eight */
  assert_int_equal(h->hstats->footprint, DM_CHUNK_BYTES);
  assert_int_equal(h->bins[cls].held, 1);
  assert_int_equal(h->bins[cls].grows, 1);
  assert_int_equal(dm_free(h, p[0]), DM_FREE_OK);
  fixture_assert_consistent(&f);
  fixture_heap_fini(&f);
}

/* A heap of one class that arena 0 filled and freed: its chunks are empty and
 * kept by arena 0, the tree has none, and more than half the pool is held.
 * Arena 1 then allocates the same class: it adopts arena 0's empty chunks
 * (in its runs, at most one chunk per way of the bin) without a reclaim pass
 * and without the footprint changing, and every slot it gets lies in one of
 * them. Then arena 0 adopts them back the same way,
 * for another class. */
static void test_empty_chunks_adopted(void **st) {
  fixture_heap_t f;
  fixture_heap_init(&f, 4 * MiB, 2);
  dm_heap_t *h = f.h;
  uint32_t cls = (uint32_t)dm_class_of(1024, 16), cap = h->classes[cls].nslots;
  enum { MAX = 4096 };
  char **p = calloc(MAX, sizeof *p);
  uint32_t n = 0;
  for (;;) { /* arena 0 takes the whole pool */
    dm_resv_t rv;
    dm_resv_init(&rv, 0, cls);
    dm_grant_t g = dm_slab_grant(h, &rv, 1);
    if (!g.bits) break;
    assert_true(n < MAX);
    p[n++] = dm_grant_slot(g, dm_ctz64(g.bits));
  }
  uint32_t nchunks = n / cap;
  assert_int_equal(n, nchunks * cap);
  assert_true(nchunks >= 8);
  uint64_t footprint = h->hstats->footprint;
  assert_int_equal(footprint, (uint64_t)nchunks * DM_CHUNK_BYTES);
  uint8_t *was0 = calloc(h->nchunks, 1);
  for (uint32_t i = 0; i < h->nchunks; i++)
    if (h->chunks[i].live) {
      assert_int_equal((uint32_t)(h->chunks[i].live >> 32), make_tag(0, cls));
      was0[i] = 1;
    }
  for (uint32_t i = 0; i < n; i++) assert_int_equal(dm_free(h, p[i]), DM_FREE_OK);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(h));
  assert_int_equal(dm_sem_value(&h->bins[cls].sem), n); /* all kept by arena 0 */
  assert_int_equal(h->hstats->footprint, footprint);
  uint64_t gen = h->hstats->reclaim;
  for (uint32_t i = 0; i < n; i++) { /* arena 1 wants as many */
    dm_resv_t rv;
    dm_resv_init(&rv, 1, cls);
    dm_grant_t g = dm_slab_grant(h, &rv, 1);
    assert_int_not_equal(g.bits, 0);
    p[i] = dm_grant_slot(g, dm_ctz64(g.bits));
    uint32_t idx = (uint32_t)((uint64_t)(p[i] - h->buddy.base) >> DM_CHUNK_SHIFT);
    assert_true(was0[idx]); /* one of arena 0's former chunks */
    assert_int_equal((uint32_t)(h->chunks[idx].live >> 32), make_tag(1, cls));
    /* the bin's runs, one chunk per way at most: 1, then 2 (8 ways here) */
    if (i == 0) assert_int_equal(h->bins[DM_NUM_CLASSES + cls].held, 1);
    if (i == cap) assert_int_equal(h->bins[DM_NUM_CLASSES + cls].held, 3);
  }
  assert_int_equal(h->way_mask, 7);
  assert_int_equal(h->hstats->reclaim, gen); /* no reclaim pass ran */
  assert_int_equal(h->hstats->footprint, footprint);
  assert_int_equal(h->hstats->peak, footprint);
  assert_int_equal(dm_sem_value(&h->bins[cls].sem), 0); /* arena 0 gave all its chunks */
  assert_int_equal(dm_sem_value(&h->bins[DM_NUM_CLASSES + cls].sem), 0);
  for (uint32_t w = 0; w <= h->way_mask; w++) assert_int_equal(bin_way(h, &h->bins[cls], w)->head, 0);
  fixture_assert_consistent(&f);
  for (uint32_t i = 0; i < n; i++) assert_int_equal(dm_free(h, p[i]), DM_FREE_OK);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(h));
  assert_int_equal(dm_sem_value(&h->bins[DM_NUM_CLASSES + cls].sem), n);
  /* arena 0 adopts one back, for 2 KiB blocks */
  uint32_t other = (uint32_t)dm_class_of(2048, 16);
  dm_resv_t rv;
  dm_resv_init(&rv, 0, other);
  dm_grant_t g = dm_slab_grant(h, &rv, 1);
  assert_int_not_equal(g.bits, 0);
  p[0] = dm_grant_slot(g, dm_ctz64(g.bits));
  uint32_t idx = (uint32_t)((uint64_t)(p[0] - h->buddy.base) >> DM_CHUNK_SHIFT);
  assert_true(was0[idx]);
  assert_int_equal((uint32_t)(h->chunks[idx].live >> 32), make_tag(0, other));
  assert_int_equal(h->hstats->reclaim, gen);
  assert_int_equal(h->hstats->footprint, footprint);
  assert_int_equal(dm_sem_value(&h->bins[DM_NUM_CLASSES + cls].sem), n - cap);
  assert_int_equal(dm_free(h, p[0]), DM_FREE_OK);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(h));
  free(was0);
  free(p);
  fixture_heap_fini(&f);
}

/* Below half the pool held, a bin takes its chunks from the tree even when
 * other bins keep empty chunks: adoption is for a pool that runs short. */
static void test_no_adoption_below_half(void **st) {
  fixture_heap_t f;
  fixture_heap_init(&f, 16 * MiB, 2);
  dm_heap_t *h = f.h;
  void *a = dm_malloc(h, 1024, 16);
  assert_non_null(a);
  uint32_t ca = (uint32_t)((uint64_t)((char *)a - h->buddy.base) >> DM_CHUNK_SHIFT);
  assert_int_equal(dm_free(h, a), DM_FREE_OK);
  assert_int_equal(h->hstats->cached, 1);
  dm_resv_t rv;
  dm_resv_init(&rv, 1, (uint32_t)dm_class_of(2048, 16));
  dm_grant_t g = dm_slab_grant(h, &rv, 1);
  assert_int_not_equal(g.bits, 0);
  uint32_t cb = (uint32_t)((uint64_t)(g.slots - h->buddy.base) >> DM_CHUNK_SHIFT);
  assert_int_not_equal(ca, cb);
  assert_int_equal(h->hstats->footprint, 2 * DM_CHUNK_BYTES);
  assert_int_equal(dm_free(h, dm_grant_slot(g, dm_ctz64(g.bits))), DM_FREE_OK);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(h));
  fixture_heap_fini(&f);
}

/* Arenas: DM_ARENAS_PER_SM per SM, fewer in a heap of less than 72 chunks
 * per arena unless it has room for three quarters of them; the counts do
 * not follow the number of classes. */
static void test_arena_count_follows_heap_size(void **st) {
  assert_int_equal(dm_arenas_for(8ull << 30, 132), 132 * DM_ARENAS_PER_SM);
  assert_int_equal(dm_arenas_for(4ull << 30, 132), 132 * DM_ARENAS_PER_SM);    /* 455 fit: 3/4 of 528 */
  assert_int_equal(dm_arenas_for(3600ull << 20, 132), 132 * DM_ARENAS_PER_SM); /* 400 fit */
  assert_int_equal(dm_arenas_for(3500ull << 20, 132), 388); /* 28000 chunks / 72, under 3/4 of 528 */
  assert_int_equal(dm_arenas_for(2ull << 30, 132), 227);    /* 16384 chunks / 72 */
  assert_int_equal(dm_arenas_for(256ull << 20, 132), 28);   /* 2048 chunks / 72 */
  assert_int_equal(dm_arenas_for(64ull << 20, 132), 7);
  assert_int_equal(dm_arenas_for(1ull << 20, 132), 1);
  assert_int_equal(dm_arenas_for(1ull << 40, 1000), DM_MAX_ARENAS);
}

/* Chunks that bins keep empty go back to the tree when a request needs them:
 * after small blocks of every class came and went, the whole pool can be
 * allocated as one block. */
static void test_cached_chunks_reclaimed_for_large(void **st) {
  fixture_heap_t f;
  fixture_heap_init(&f, 4 * MiB, 3);
  dm_heap_t *h = f.h;
  void *p[DM_NUM_CLASSES * 3];
  uint32_t n = 0;
  for (uint32_t c = 0; c < DM_NUM_CLASSES; c++)
    for (int k = 0; k < 3; k++) assert_non_null(p[n++] = dm_malloc(h, h->classes[c].size, 16));
  for (uint32_t i = 0; i < n; i++) assert_int_equal(dm_free(h, p[i]), DM_FREE_OK);
  assert_true(h->hstats->footprint > 0); /* chunks kept by their bins */
  assert_true(dm_heap_is_whole(h));
  uint64_t biggest = 1ull << (63 - __builtin_clzll(h->buddy.pool_bytes));
  assert_true(h->hstats->footprint + biggest > h->buddy.pool_bytes); /* needs the cached ones */
  void *all = dm_malloc(h, biggest, 16);
  assert_non_null(all);
  assert_int_equal(h->hstats->footprint, biggest);
  assert_int_equal(dm_free(h, all), DM_FREE_OK);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(h));
  assert_int_equal(h->hstats->footprint, 0);
  fixture_heap_fini(&f);
}

/* When the tree is full, an arena takes free slots that another arena holds. */
/* A fresh fixed heap hands out its chunks in order (fresh.c): a bin's
 * grow takes the next ones, a run of adjacent chunks with one counter; the
 * tree holds none of them until a request needs it, and then the fresh
 * chunks left go to it merged into whole blocks, so a block of most of the
 * pool can be had. A chunk taken fresh goes back to the tree by the
 * ordinary free. */
static void test_fresh_chunks(void **st) {
  fixture_heap_t f;
  fixture_heap_init(&f, 16 * MiB, 2);
  dm_heap_t *h = f.h;
  uint64_t n = h->nchunks;
  assert_true(n >= 64);
  assert_int_equal(h->fresh_end, n);
  assert_int_equal(dm_fresh_count(h), n);
  assert_int_equal(dm_bcache_count(h, DM_CHUNK_ORDER), 0);
  assert_true(dm_heap_is_whole(h));
  fixture_assert_consistent(&f);
  void *p = dm_malloc(h, 64, 16);
  assert_non_null(p);
  assert_int_equal((uint64_t)((char *)p - h->buddy.base) >> DM_CHUNK_SHIFT, 0); /* the first chunk */
  assert_int_equal(dm_fresh_count(h), n - 1);
  fixture_assert_consistent(&f);
  /* a 4 KiB bin's grows take runs of 1, 2 and 4 chunks, in order */
  uint32_t big4 = (uint32_t)dm_class_of(4096, 16), cap4 = h->classes[big4].nslots;
  void *r[7 * 32];
  assert_int_equal(cap4, 32);
  for (uint32_t i = 0; i < 7 * cap4; i++) assert_non_null(r[i] = dm_malloc(h, 4096, 16));
  assert_int_equal(dm_fresh_count(h), n - 8);
  assert_int_equal(h->hstats->footprint, 8 * DM_CHUNK_BYTES);
  for (uint32_t i = 0; i < 7 * cap4; i++) {
    uint64_t c = (uint64_t)((char *)r[i] - h->buddy.base) >> DM_CHUNK_SHIFT;
    assert_true(c >= 1 && c < 8);
  }
  fixture_assert_consistent(&f);
  for (uint32_t i = 0; i < 7 * cap4; i++) assert_int_equal(dm_free(h, r[i]), DM_FREE_OK);
  /* a block of a quarter of the pool or more: the tree gets the fresh
   * chunks left, merged into whole blocks, and serves it at once */
  uint64_t big = 1;
  while (4 * big <= h->buddy.pool_bytes) big *= 2;
  assert_true(big >= 4 * DM_CHUNK_BYTES);
  void *q = dm_malloc(h, big, 16);
  assert_non_null(q);
  uint64_t qoff = (uint64_t)((char *)q - h->buddy.base);
  assert_true(qoff % big == 0 && qoff >= 8 * DM_CHUNK_BYTES);
  assert_int_equal(dm_fresh_count(h), 0);
  assert_int_equal(h->hstats->footprint, 8 * DM_CHUNK_BYTES + big);
  fixture_assert_consistent(&f);
  /* fresh chunks are gone: the next grow's chunk comes from the tree */
  void *s = dm_malloc(h, 2048, 16);
  assert_non_null(s);
  uint64_t soff = (uint64_t)((char *)s - h->buddy.base);
  assert_true(soff >= 8 * DM_CHUNK_BYTES && (soff < qoff || soff >= qoff + big));
  fixture_assert_consistent(&f);
  assert_int_equal(dm_free(h, s), DM_FREE_OK);
  assert_int_equal(dm_free(h, p), DM_FREE_OK); /* its chunk stays with its bin, empty */
  assert_int_equal(dm_free(h, q), DM_FREE_OK);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(h));
  /* a block of the whole pool: the reclaim pass gives the bins' empty
   * chunks (taken fresh) back to the tree, which merges them */
  void *all = dm_malloc(h, h->buddy.pool_bytes, 16);
  if ((h->buddy.pool_bytes & (h->buddy.pool_bytes - 1)) == 0) assert_ptr_equal(all, h->buddy.base);
  if (all) assert_int_equal(dm_free(h, all), DM_FREE_OK);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(h));
  fixture_heap_fini(&f);
}

/* Arena `arena` takes slots of class cls one at a time until the heap has
 * none (at most max, into p). Returns how many it took. */
static uint32_t take_all(dm_heap_t *h, uint32_t arena, uint32_t cls, char **p, uint32_t max) {
  uint32_t n = 0;
  while (n < max) {
    dm_resv_t rv;
    dm_resv_init(&rv, arena, cls);
    dm_grant_t g = dm_slab_grant(h, &rv, 1);
    if (!g.bits) break;
    p[n++] = dm_grant_slot(g, dm_ctz64(g.bits));
  }
  return n;
}

/* A 2 MiB heap of 2 arenas whose arena 0 took every 64 B slot there is:
 * their pointers (calloc'd, the caller frees the array), *n of them. */
enum { FULL_MAX = 40000 };
static char **arena0_takes_all(fixture_heap_t *f, uint32_t *cls, uint32_t *n) {
  fixture_heap_init(f, 2 * MiB, 2);
  *cls = (uint32_t)dm_class_of(64, 16);
  char **p = calloc(FULL_MAX, sizeof *p);
  *n = take_all(f->h, 0, *cls, p, FULL_MAX);
  assert_true(*n > 1000);
  return p;
}

/* A request that finds the tree full and no free slot in any arena looks
 * again while another arena's bin of its class expects units (a grow under
 * way), and gives up when none come (bounded: NULL, not a hang); the
 * expectation it waited on is left alone. With the expectation retired, a
 * full heap answers NULL at once. */
static void test_steal_waits_for_grows(void **st) {
  fixture_heap_t f;
  uint32_t cls, n;
  char **p = arena0_takes_all(&f, &cls, &n);
  dm_heap_t *h = f.h;
  dm_sem_t *s0 = &h->bins[0 * DM_NUM_CLASSES + cls].sem;
  assert_int_equal(dm_sem_value(s0), 0);
  /* arena 0's bin announces a grow of one chunk's units, as a request does */
  uint32_t cap = h->classes[cls].nslots;
  assert_int_equal(dm_sem_wait(s0, 1, cap), DM_SEM_GROW);
  assert_int_equal(dm_sem_expected(s0), cap - 1);
  dm_resv_t rv;
  dm_resv_init(&rv, 1, cls);
  uint64_t t0 = dm_now_ns();
  dm_grant_t g = dm_slab_grant(h, &rv, 1); /* waits for the units, none come */
  assert_int_equal(g.bits, 0);
  assert_true(dm_now_ns() - t0 >= DM_STEAL_WAIT_NS); /* it did wait */
  assert_int_equal(dm_sem_expected(s0), cap - 1);
  dm_sem_signal(s0, 0, cap - 1); /* the grow failed: its expectation retired */
  dm_resv_init(&rv, 1, cls);
  g = dm_slab_grant(h, &rv, 1);
  assert_int_equal(g.bits, 0);
  for (uint32_t i = 0; i < n; i++) assert_int_equal(dm_free(h, p[i]), DM_FREE_OK);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(h));
  free(p);
  fixture_heap_fini(&f);
}

static void test_stealing(void **st) {
  fixture_heap_t f;
  uint32_t cls, n;
  char **p = arena0_takes_all(&f, &cls, &n);
  dm_heap_t *h = f.h;
  for (uint32_t i = 0; i < n; i += 2) {
    dm_free(h, p[i]);
    p[i] = NULL;
  }
  uint32_t stolen = 0;
  for (;;) { /* arena 1 finds no chunk in the tree, only arena 0's free slots */
    dm_resv_t rv;
    dm_resv_init(&rv, 1, cls);
    uint32_t want = 3, got = 0; /* a grant may cover part: ask again for the rest */
    while (got < want) {
      dm_grant_t g = dm_slab_grant(h, &rv, want - got);
      if (!g.bits) break;
      got += (uint32_t)dm_popc64(g.bits);
      for (uint64_t bits = g.bits; bits; bits &= bits - 1) {
        char *q = dm_grant_slot(g, dm_ctz64(bits));
        for (uint32_t i = 0; i < n; i += 2)
          if (!p[i]) {
            p[i] = q;
            break;
          }
      }
    }
    stolen += got;
    if (got < want) break;
  }
  assert_int_equal(stolen, (n + 1) / 2);
  for (uint32_t i = 0; i < n; i++) assert_int_equal(dm_free(h, p[i]), DM_FREE_OK);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(h));
  free(p);
  fixture_heap_fini(&f);
}

/* n slots of class cls for arena `arena` (a warp of n lanes), into out. */
static void grant_lanes(dm_heap_t *h, uint32_t arena, uint32_t cls, uint32_t n, char **out) {
  dm_resv_t rv;
  dm_resv_init(&rv, arena, cls);
  for (uint32_t got = 0; got < n;) {
    dm_grant_t g = dm_slab_grant(h, &rv, n - got);
    assert_true(g.bits != 0);
    for (uint64_t bits = g.bits; bits; bits &= bits - 1) out[got++] = dm_grant_slot(g, dm_ctz64(bits));
  }
}

static uint32_t arena_of(const dm_heap_t *h, const void *p) {
  return tag_arena((uint32_t)(h->chunks[chunk_of(h, p)].live >> 32));
}

/* Requests of a few lanes for a small class, from arenas whose bins hold no
 * chunk, are served by the first bin of their group of DM_SHARE_ARENAS
 * arenas until it holds DM_SHARE_CHUNKS chunks; after that each arena's bin
 * takes chunks of its own. A warp's worth of lanes, or a class above
 * DM_SHARE_SIZE, takes its own at once. */
static void test_small_requests_share_a_bin(void **st) {
  fixture_heap_t f;
  fixture_heap_init(&f, 64 * MiB, 2 * DM_SHARE_ARENAS);
  dm_heap_t *h = f.h;
  uint32_t cls = (uint32_t)dm_class_of(64, 16), cap = h->classes[cls].nslots;
  enum { MAX = 40000 };
  char **p = calloc(MAX, sizeof *p);
  uint32_t n = 0;
  for (uint32_t a = 0; a < 2 * DM_SHARE_ARENAS; a++) { /* one lane each: the group's first bin */
    grant_lanes(h, a, cls, 1, p + n);
    assert_int_equal(arena_of(h, p[n++]), a & ~(DM_SHARE_ARENAS - 1u));
    assert_int_equal(bin_at(h, a, cls)->held, a % DM_SHARE_ARENAS == 0);
  }
  grant_lanes(h, 3, cls, 32, p + n); /* a warp's worth: arena 3's own bin */
  for (uint32_t i = 0; i < 32; i++) assert_int_equal(arena_of(h, p[n + i]), 3);
  n += 32;
  assert_int_equal(bin_at(h, 3, cls)->held, 1);
  uint32_t big = (uint32_t)dm_class_of(1024, 16); /* above DM_SHARE_SIZE: its own bin */
  grant_lanes(h, 5, big, 1, p + n);
  assert_int_equal(arena_of(h, p[n++]), 5);
  /* demand: arena 1's one-lane requests grow arena 0's bin, until it holds
   * DM_SHARE_CHUNKS chunks */
  while (bin_at(h, 0, cls)->held < DM_SHARE_CHUNKS) {
    assert_true(n < MAX);
    grant_lanes(h, 1, cls, 1, p + n);
    assert_int_equal(arena_of(h, p[n++]), 0);
  }
  assert_true(n > (DM_SHARE_CHUNKS - 1) * cap);
  assert_int_equal(bin_at(h, 1, cls)->held, 0);
  grant_lanes(h, 2, cls, 1, p + n); /* then arena 2 takes a chunk of its own */
  assert_int_equal(arena_of(h, p[n++]), 2);
  assert_int_equal(bin_at(h, 2, cls)->held, 1);
  for (uint32_t i = 0; i < n; i++) assert_int_equal(dm_free(h, p[i]), DM_FREE_OK);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(h));
  free(p);
  fixture_heap_fini(&f);
}

/* The fast grant (the GPU malloc's common path) and dm_slab_grant going on
 * from what it leaves. It takes nothing when the bin has too few units,
 * when a waiter is reserved on the semaphore, or for more slots than a chunk
 * holds. On a hint chunk with less room than asked it pins what fits, and
 * the full grant gives the rest back and pins it on another chunk. Every slot
 * is handed out once; the heap is consistent, and whole after the frees. */
static void test_grant_fast(void **st) {
  fixture_heap_t f;
  fixture_heap_init(&f, 8 * MiB, 1);
  dm_heap_t *h = f.h;
  uint32_t cls = (uint32_t)dm_class_of(4096, 16), cap = h->classes[cls].nslots;
  dm_bin_t *b = bin_at(h, 0, cls);
  char *got[96];
  uint32_t n = 0;
  dm_resv_t rv;
#define TAKE(g)                                            \
  for (uint64_t bits = (g).bits; bits; bits &= bits - 1) { \
    assert_true(n < 96);                                   \
    got[n++] = dm_grant_slot((g), dm_ctz64(bits));         \
  }
  /* a fresh bin: no units, nothing taken; the full grant grows chunk A */
  dm_resv_init(&rv, 0, cls);
  dm_grant_t g = dm_slab_grant_fast(h, &rv, 20);
  assert_int_equal(g.bits, 0);
  assert_int_equal(rv.units + rv.pinned + rv.drop, 0);
  assert_int_equal(dm_sem_value(&b->sem), 0);
  for (uint32_t want = 20; want;) {
    g = dm_slab_grant(h, &rv, want);
    assert_true(g.bits != 0);
    want -= (uint32_t)dm_popc64(g.bits);
    TAKE(g);
  }
  /* A has cap - 20 left: too few for 20 */
  assert_int_equal(dm_sem_value(&b->sem), cap - 20);
  dm_resv_init(&rv, 0, cls);
  assert_int_equal(dm_slab_grant_fast(h, &rv, 20).bits, 0);
  assert_int_equal(rv.units, 0);
  /* the second grow is a run of two: B (20 kept, the hint) and C */
  for (uint32_t want = 20; want;) {
    g = dm_slab_grant(h, &rv, want);
    want -= (uint32_t)dm_popc64(g.bits);
    TAKE(g);
  }
  uint32_t units = dm_sem_value(&b->sem);
  assert_int_equal(units, 3 * cap - 40);
  /* more than a chunk holds, or a waiter reserved: nothing taken */
  dm_resv_init(&rv, 0, cls);
  assert_int_equal(dm_slab_grant_fast(h, &rv, cap + 1).bits, 0);
  uint64_t w = b->sem.w;
  b->sem.w = dm_semw_pack(dm_semw_c(w), dm_semw_e(w), 1);
  assert_int_equal(dm_slab_grant_fast(h, &rv, 1).bits, 0);
  b->sem.w = w;
  assert_int_equal(rv.units + rv.pinned + rv.drop, 0);
  assert_int_equal(dm_sem_value(&b->sem), units);
  /* the hint (B) has cap - 20 slots for 20: those are pinned and claimed,
   * the rest is owed back to B and pinned elsewhere */
  g = dm_slab_grant_fast(h, &rv, 20);
  assert_int_equal(dm_popc64(g.bits), cap - 20);
  assert_int_equal(rv.drop, 40 - cap);
  assert_int_equal(rv.units, 40 - cap);
  assert_int_equal(rv.pinned, 0);
  TAKE(g);
  for (uint32_t want = 40 - cap; want;) {
    g = dm_slab_grant(h, &rv, want);
    assert_true(g.bits != 0);
    want -= (uint32_t)dm_popc64(g.bits);
    TAKE(g);
  }
  assert_int_equal(rv.drop, 0);
  assert_int_equal(n, 60);
  assert_int_equal(dm_sem_value(&b->sem), units - 20);
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = 0; j < i; j++) assert_ptr_not_equal(got[i], got[j]);
  fixture_assert_consistent(&f);
  /* the common case: every slot from one word, nothing left over */
  dm_resv_init(&rv, 0, (uint32_t)dm_class_of(16, 16));
  char *small[4];
  uint32_t k = 0;
  for (uint32_t want = 4; want;) {
    g = dm_slab_grant(h, &rv, want);
    want -= (uint32_t)dm_popc64(g.bits);
    for (uint64_t bits = g.bits; bits; bits &= bits - 1) small[k++] = dm_grant_slot(g, dm_ctz64(bits));
  }
  dm_resv_init(&rv, 0, (uint32_t)dm_class_of(16, 16));
  g = dm_slab_grant_fast(h, &rv, 4);
  assert_int_equal(dm_popc64(g.bits), 4);
  assert_int_equal(rv.units + rv.pinned + rv.drop, 0);
  for (uint64_t bits = g.bits; bits; bits &= bits - 1)
    assert_int_equal(dm_free(h, dm_grant_slot(g, dm_ctz64(bits))), DM_FREE_OK);
  for (uint32_t i = 0; i < 4; i++) assert_int_equal(dm_free(h, small[i]), DM_FREE_OK);
  for (uint32_t i = 0; i < n; i++) assert_int_equal(dm_free(h, got[i]), DM_FREE_OK);
#undef TAKE
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(h));
  fixture_heap_fini(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cached_chunks_reclaimed_for_large),
      cmocka_unit_test(test_grow_runs),
      cmocka_unit_test(test_empty_chunks_adopted),
      cmocka_unit_test(test_no_adoption_below_half),
      cmocka_unit_test(test_arena_count_follows_heap_size),
      cmocka_unit_test(test_class_mapping),
      cmocka_unit_test(test_class_table_and_tags),
      cmocka_unit_test(test_chunk_geometry),
      cmocka_unit_test(test_class_offsets),
      cmocka_unit_test(test_aligned_slots),
      cmocka_unit_test(test_class_div_exact),
      cmocka_unit_test(test_aligned_slots_free_as_slots),
      cmocka_unit_test(test_side_bitmap_fills_chunk),
      cmocka_unit_test(test_min_block),
      cmocka_unit_test(test_blocks_own_their_sectors),
      cmocka_unit_test(test_bin_bookkeeping),
      cmocka_unit_test(test_pin_from_stack_while_searched),
      cmocka_unit_test(test_stealing),
      cmocka_unit_test(test_grant_fast),
      cmocka_unit_test(test_grant_fast_next),
      cmocka_unit_test(test_ways),
      cmocka_unit_test(test_slot_hints),
      cmocka_unit_test(test_room_search),
      cmocka_unit_test(test_fresh_chunks),
      cmocka_unit_test(test_steal_waits_for_grows),
      cmocka_unit_test(test_small_requests_share_a_bin),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
