/* test_slab_grow.c — a bin's new chunks: grow runs, empty chunks adopted by
 * other bins (and not below three quarters of the pool), runs of chunks up
 * to three quarters of the pool, the arena count, kept chunks
 * reclaimed for a large request, fresh chunks, stealing between arenas and
 * small requests served by their group's first bin. */
#include "test_common.h"
#include "chunk.h"
#include "slab_test.h"

#define MiB (1ull << 20)

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

/* Past half the pool held, a bin's grows still take runs of chunks; past
 * three quarters, one chunk each. A bin filled until the tree runs dry. */
static void test_runs_until_three_quarters(void **st) {
  fixture_heap_t f;
  fixture_heap_init_tree(&f, 16 * MiB, 1);
  dm_heap_t *h = f.h;
  uint64_t pool = h->buddy.pool_bytes, runs_past_half = 0, grows_past = 0;
  enum { MAX = 8192 };
  void **p = calloc(MAX, sizeof *p);
  uint32_t n = 0;
  for (; n < MAX; n++) {
    uint64_t before = h->hstats->footprint;
    if (!(p[n] = dm_malloc(h, 4096, 16))) break;
    uint64_t took = (h->hstats->footprint - before) / DM_CHUNK_BYTES;
    if (before > pool - pool / 4 && took) {
      grows_past++;
      assert_int_equal(took, 1);
    } else if (before > pool / 2 && took > 1) {
      runs_past_half++;
    }
  }
  assert_true(runs_past_half > 0);
  assert_true(grows_past > 0);
  for (uint32_t i = 0; i < n; i++) assert_int_equal(dm_free(h, p[i]), DM_FREE_OK);
  free(p);
  fixture_heap_fini_whole(&f);
}

/* Below three quarters of the pool held, a bin takes its chunks from the
 * tree even when other bins keep empty chunks: adoption is for a pool that
 * runs short. */
static void test_no_adoption_below_three_quarters(void **st) {
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
  fixture_heap_fini_whole(&f);
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
  fixture_heap_fini_whole(&f);
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cached_chunks_reclaimed_for_large),
      cmocka_unit_test(test_grow_runs),
      cmocka_unit_test(test_empty_chunks_adopted),
      cmocka_unit_test(test_no_adoption_below_three_quarters),
      cmocka_unit_test(test_runs_until_three_quarters),
      cmocka_unit_test(test_arena_count_follows_heap_size),
      cmocka_unit_test(test_stealing),
      cmocka_unit_test(test_fresh_chunks),
      cmocka_unit_test(test_steal_waits_for_grows),
      cmocka_unit_test(test_small_requests_share_a_bin),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
