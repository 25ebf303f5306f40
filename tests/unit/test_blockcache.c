/* test_blockcache.c — freed large blocks kept whole per order: the next
 * request of the order gets one back without the tree, a second free of a
 * cached block (or of a block inside one) is a double free, the cache never
 * costs a request that the whole pool could serve, a full ring sends blocks
 * to the tree, a ring with a slot for every block of its order keeps them
 * all, and threads putting and taking at once lose nothing. */
#include <pthread.h>
#include "test_common.h"

#define KiB (1ull << 10)
#define MiB (1ull << 20)

static fixture_heap_t f;
static uint32_t fresh_free[DM_MAX_ORDERS]; /* AVAIL blocks per order of the fresh heap */

static int setup(void **st) {
  fixture_heap_init_tree(&f, 16 * MiB, 2);
  for (uint32_t o = 0; o <= f.h->buddy.top; o++) fresh_free[o] = dm_sem_value(&f.h->buddy.sem[o]);
  return 0;
}

/* The tree's free blocks are those of the fresh heap: everything merged back. */
static void assert_tree_as_fresh(void) {
  for (uint32_t o = 0; o <= f.h->buddy.top; o++)
    assert_int_equal(dm_sem_value(&f.h->buddy.sem[o]), fresh_free[o]);
}
static int teardown(void **st) {
  fixture_heap_fini(&f);
  return 0;
}

static uint32_t cached_total(void) {
  uint32_t n = 0;
  for (uint32_t o = 0; o < DM_CACHE_ORDERS; o++) n += dm_bcache_count(f.h, o);
  return n;
}

static void test_free_is_cached_and_reused(void **st) {
  void *a = dm_malloc(f.h, 16 * KiB, 16);
  assert_non_null(a);
  assert_int_equal(dm_free(f.h, a), DM_FREE_OK);
  assert_int_equal(dm_bcache_count(f.h, 0), 1);
  assert_int_equal(f.h->hstats->footprint, 0); /* a cached block is free memory */
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(f.h));
  void *b = dm_malloc(f.h, 16 * KiB, 16);
  assert_ptr_equal(a, b); /* taken back from the cache */
  assert_int_equal(dm_bcache_count(f.h, 0), 0);
  assert_int_equal(dm_free(f.h, b), DM_FREE_OK);
  assert_int_equal(dm_bcache_flush(f.h), 1);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(f.h));
  assert_tree_as_fresh();
}

static void test_double_free_of_cached_block(void **st) {
  void *a = dm_malloc(f.h, 64 * KiB, 16);
  assert_int_equal(dm_free(f.h, a), DM_FREE_OK);
  assert_int_equal(dm_free(f.h, a), DM_FREE_DOUBLE);
  assert_int_equal(f.h->hstats->double_frees, 1);
  assert_int_equal(dm_bcache_count(f.h, 2), 1); /* kept once */
  /* A warp's run of four 16 KiB blocks, freed as one: the cache keeps the
   * 64 KiB block whole; freeing one of the four again is a double free. */
  char *run = dm_heap_malloc_run(f.h, 0, 4, 0);
  assert_non_null(run);
  assert_ptr_equal(run, a); /* the cached 64 KiB block, carved */
  uint64_t first = dm_buddy_node_at(&f.h->buddy, 0, (uint64_t)(run - f.h->buddy.base));
  dm_buddy_join_stores(&f.h->buddy, first >> 2, 2); /* what the warp's lanes store */
  dm_heap_free_nodes(f.h, first >> 2, 2, 0);
  assert_int_equal(dm_bcache_count(f.h, 2), 1);
  assert_int_equal(dm_free(f.h, run + 32 * KiB), DM_FREE_DOUBLE);
  assert_int_equal(dm_free(f.h, run), DM_FREE_DOUBLE);
  assert_int_equal(f.h->hstats->double_frees, 3);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(f.h));
  dm_bcache_flush(f.h);
  f.h->hstats->double_frees = 0;
}

/* Fill the pool with 16 KiB blocks, free them all (the cache keeps what its
 * ring holds), then ask for the largest block the pool has: the tree lacks
 * it until the cached blocks go back, so the request flushes the cache.
 * The 16 MiB pool's ring of 16 KiB blocks (512 slots) holds fewer than the
 * pool's blocks: puts reserve a slot, and those that find the ring full go
 * to the tree. `whole`: a 128 MiB pool, whose 8192 blocks of 16 KiB are
 * more than DM_CACHE_SLOTS: a slot for each, every block cached. */
static void fill_free_then_largest(int whole) {
  if (whole) {
    fixture_heap_fini(&f);
    fixture_heap_init_tree(&f, 128 * MiB, 2);
  }
  enum { MAXB = 8192 };
  void **blk = malloc(MAXB * sizeof *blk);
  assert_non_null(blk);
  int n = 0;
  while (n < MAXB && (blk[n] = dm_malloc(f.h, 16 * KiB, 16)) != NULL) n++;
  assert_true(n > 500);
  for (int i = 0; i < n; i++) assert_int_equal(dm_free(f.h, blk[i]), DM_FREE_OK);
  free(blk);
  if (whole) {
    assert_true(f.h->bwhole & 1u);
    assert_int_equal(dm_bcache_count(f.h, 0), n);
  } else {
    assert_false(f.h->bwhole & 1u);
    assert_int_equal(dm_bcache_count(f.h, 0), f.h->bcap[0]);
    assert_true(f.h->bcap[0] < (uint32_t)n);
  }
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(f.h));
  uint64_t biggest = 1ull << (f.h->buddy.top + DM_LEAF_SHIFT);
  while (biggest > f.h->buddy.pool_bytes) biggest >>= 1;
  void *big = dm_malloc(f.h, biggest, 16);
  assert_non_null(big);
  assert_int_equal(cached_total(), 0);
  assert_int_equal(dm_free(f.h, big), DM_FREE_OK);
  dm_bcache_flush(f.h);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(f.h));
}
static void test_cache_never_costs_a_request(void **st) { fill_free_then_largest(0); }
static void test_whole_ring_keeps_every_block(void **st) { fill_free_then_largest(1); }

/* Threads allocate and free large blocks of a few orders at once: every
 * block is handed to one thread at a time (each writes its id over its
 * block and checks it before freeing), and the heap ends whole. */
#define THREADS 8
#define ROUNDS 3000
static void *churn(void *arg) {
  uintptr_t id = (uintptr_t)arg;
  uint32_t x = (uint32_t)id * 2654435761u + 1u;
  void *held[4] = {0};
  for (int r = 0; r < ROUNDS; r++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    int k = (int)(x % 4);
    if (held[k]) {
      uint64_t *w = held[k];
      if (w[0] != id || w[1] != (uint64_t)k) fail_msg("block shared between threads");
      if (dm_free(f.h, held[k]) != DM_FREE_OK) fail_msg("free failed");
      held[k] = NULL;
    } else {
      uint64_t size = (16 * KiB) << (x >> 8) % 3;
      uint64_t *w = dm_malloc(f.h, size, 16);
      if (w) {
        w[0] = id;
        w[1] = (uint64_t)k;
        held[k] = w;
      }
    }
  }
  for (int k = 0; k < 4; k++)
    if (held[k]) dm_free(f.h, held[k]);
  return NULL;
}

static void test_threads_put_and_take(void **st) {
  pthread_t t[THREADS];
  for (uintptr_t i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, churn, (void *)i);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  assert_int_equal(f.h->hstats->double_frees + f.h->hstats->foreign_frees, 0);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(f.h));
  assert_true(cached_total() > 0);
  dm_bcache_flush(f.h);
  assert_tree_as_fresh();
}

/* The GPU suite's order: large blocks of many orders fill the heap and are
 * freed (the cache keeps a share of every order), then threads take small
 * blocks of mixed sizes, whose chunks must come from the tree and the cache
 * both. Every phase ends, the small requests fill the pool, and the heap
 * ends whole. */
static pthread_barrier_t phase;
static uint64_t small_peak; /* footprint when the small requests failed */
static void *fill_then_mixed(void *arg) {
  uintptr_t id = (uintptr_t)arg;
  enum { MAXB = 4096 };
  static __thread void *mine[MAXB];
  uint32_t x = (uint32_t)id * 2246822519u + 7u;
  int n = 0;
  for (int miss = 0; n < MAXB && miss < 4;) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    uint64_t size = (16 * KiB) << (x % 8);
    void *p = dm_malloc(f.h, size, 16);
    if (p)
      mine[n++] = p;
    else
      miss++;
  }
  pthread_barrier_wait(&phase);
  for (int i = 0; i < n; i++)
    if (dm_free(f.h, mine[i]) != DM_FREE_OK) fail_msg("large free failed");
  pthread_barrier_wait(&phase);
  n = 0;
  for (int i = 0; i < MAXB; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    void *p = dm_malloc(f.h, 16 + x % 4081, 16);
    if (!p) break;
    mine[n++] = p;
  }
  pthread_barrier_wait(&phase);
  if (id == 0) small_peak = f.h->hstats->footprint;
  pthread_barrier_wait(&phase);
  for (int i = 0; i < n; i++)
    if (dm_free(f.h, mine[i]) != DM_FREE_OK) fail_msg("small free failed");
  return NULL;
}

static void test_large_fill_then_mixed_small(void **st) {
  pthread_t t[THREADS];
  pthread_barrier_init(&phase, NULL, THREADS);
  for (uintptr_t i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, fill_then_mixed, (void *)i);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&phase);
  /* the small requests got NULL only with the pool held: the cached large
   * blocks went back to the tree for them */
  assert_true(small_peak > f.h->buddy.pool_bytes / 10 * 9);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(f.h));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_free_is_cached_and_reused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_double_free_of_cached_block, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache_never_costs_a_request, setup, teardown),
      cmocka_unit_test_setup_teardown(test_whole_ring_keeps_every_block, setup, teardown),
      cmocka_unit_test_setup_teardown(test_threads_put_and_take, setup, teardown),
      cmocka_unit_test_setup_teardown(test_large_fill_then_mixed_small, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
