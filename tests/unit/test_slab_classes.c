/* test_slab_classes.c — size classes and where their slots lie: the class
 * table and tags, chunk geometry, class offsets, aligned slots, the side
 * bitmap, the smallest block and the sectors a block owns. */
#include "test_common.h"
#include "chunk.h"

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

int main(void) {
  const struct CMUnitTest tests[] = {
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
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
