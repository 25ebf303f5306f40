/* test_buddy.c — the tree buddy allocator: split, merge, the two invariants
 * (no two available siblings; an available node has only busy descendants),
 * alignment, pools that are not a power of two, lookup for free. */
#include <pthread.h>
#include <unistd.h>
#include "test_common.h"

#define MiB (1ull << 20)

static void test_fresh_heap_is_whole(void **st) {
  fixture_heap_t f;
  fixture_heap_init_tree(&f, 8 * MiB, 2);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(f.h));
  fixture_heap_fini(&f);
}

static void test_split_then_merge(void **st) {
  fixture_heap_t f;
  fixture_heap_init_tree(&f, 8 * MiB, 1);
  dm_buddy_t *b = &f.h->buddy;
  uint64_t n = dm_buddy_alloc(b, 0); /* splits down from the largest block */
  assert_true(n != 0);
  assert_int_equal(dm_buddy_order(b, n), 0);
  fixture_assert_consistent(&f);
  assert_false(dm_heap_is_whole(f.h));
  /* Every order below the largest block now holds exactly one right child. */
  uint32_t first = 0;
  for (uint32_t o = 0; o <= b->top; o++)
    if (dm_sem_value(&b->sem[o])) first++;
  assert_true(first >= 1);
  dm_buddy_free(b, n);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(f.h));
  fixture_heap_fini(&f);
}

static void test_fill_every_leaf(void **st) {
  fixture_heap_t f;
  fixture_heap_init_tree(&f, 4 * MiB, 1);
  dm_buddy_t *b = &f.h->buddy;
  uint64_t leaves = b->pool_bytes >> DM_LEAF_SHIFT;
  uint64_t *nodes = calloc(leaves + 1, sizeof *nodes);
  char *seen = calloc(leaves, 1);
  uint64_t k = 0;
  for (;;) {
    uint64_t n = dm_buddy_alloc(b, 0);
    if (!n) break;
    uint64_t off = dm_buddy_node_offset(b, n);
    assert_true(off < b->pool_bytes);
    assert_int_equal(seen[off >> DM_LEAF_SHIFT], 0);
    seen[off >> DM_LEAF_SHIFT] = 1;
    nodes[k++] = n;
  }
  assert_int_equal(k, leaves); /* every leaf, and then NULL */
  fixture_assert_consistent(&f);
  for (uint64_t i = 0; i < k; i += 2) dm_buddy_free(b, nodes[i]); /* no merges possible */
  fixture_assert_consistent(&f);
  for (uint64_t i = 1; i < k; i += 2) dm_buddy_free(b, nodes[i]);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(f.h));
  free(nodes);
  free(seen);
  fixture_heap_fini(&f);
}

/* Random orders, invariants after every step, blocks aligned to their size
 * and disjoint. */
static void test_random_ops_keep_invariants(void **st) {
  fixture_heap_t f;
  fixture_heap_init_tree(&f, 6 * MiB + 5 * 16384, 1); /* not a power of two */
  dm_buddy_t *b = &f.h->buddy;
  enum { LIVE = 64 };
  uint64_t live[LIVE] = {0};
  srand(7);
  for (int step = 0; step < 3000; step++) {
    int i = rand() % LIVE;
    if (live[i]) {
      dm_buddy_free(b, live[i]);
      live[i] = 0;
    } else {
      uint32_t order = (uint32_t)(rand() % (b->top + 2));
      live[i] = dm_buddy_alloc(b, order);
      if (live[i]) {
        uint64_t off = dm_buddy_node_offset(b, live[i]);
        uint64_t size = 1ull << (order + DM_LEAF_SHIFT);
        assert_int_equal(off % size, 0);
        assert_true(off + size <= b->pool_bytes);
        for (int j = 0; j < LIVE; j++) {
          if (j == i || !live[j]) continue;
          uint64_t o2 = dm_buddy_node_offset(b, live[j]);
          uint64_t s2 = 1ull << (dm_buddy_order(b, live[j]) + DM_LEAF_SHIFT);
          assert_true(off + size <= o2 || o2 + s2 <= off);
        }
      }
    }
    fixture_assert_consistent(&f);
  }
  for (int i = 0; i < LIVE; i++)
    if (live[i]) dm_buddy_free(b, live[i]);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(f.h));
  fixture_heap_fini(&f);
}

static void test_lookup(void **st) {
  fixture_heap_t f;
  fixture_heap_init_tree(&f, 8 * MiB, 1);
  dm_buddy_t *b = &f.h->buddy;
  uint64_t n = dm_buddy_alloc(b, 2);
  uint64_t off = dm_buddy_node_offset(b, n);
  int why;
  assert_int_equal(dm_buddy_lookup(b, off, &why), n);
  assert_int_equal(why, DM_FREE_OK);
  assert_int_equal(dm_buddy_lookup(b, off + 16384, &why), 0); /* inside the block */
  assert_int_equal(why, DM_FREE_FOREIGN);
  assert_int_equal(dm_buddy_lookup(b, b->pool_bytes, &why), 0);
  assert_int_equal(why, DM_FREE_FOREIGN);
  dm_buddy_free(b, n);
  assert_int_equal(dm_buddy_lookup(b, off, &why), 0); /* now available: double free */
  assert_int_equal(why, DM_FREE_DOUBLE);
  fixture_heap_fini(&f);
}

static void test_too_large_fails_at_once(void **st) {
  fixture_heap_t f;
  fixture_heap_init_tree(&f, 4 * MiB, 1);
  dm_buddy_t *b = &f.h->buddy;
  assert_int_equal(dm_buddy_alloc(b, b->top + 1), 0);
  uint64_t n = dm_buddy_alloc(b, 0);
  /* The root is split now: a whole-pool request fails and leaves no trace. */
  assert_int_equal(dm_buddy_alloc(b, b->top), 0);
  fixture_assert_consistent(&f);
  dm_buddy_free(b, n);
  assert_true(dm_heap_is_whole(f.h));
  fixture_heap_fini(&f);
}

/* The race that stranded free buddies on the GPU, played out step by step.
 * Leaves a0 a1 | a2 a3 are allocated; a3 is freed (AVAIL). A waiter takes a
 * unit of order 0 (it will claim "some" AVAIL leaf). a2 is freed while its
 * buddy a3 is AVAIL and no unit is free. Then a0 is freed (a1 is busy) and
 * the waiter claims the lowest AVAIL leaf, a0. Had the free of a2 made it
 * AVAIL at once, a2 and a3 would stay free and unmerged for good. */
static dm_buddy_t *race_b;
static uint64_t race_a2;
static volatile int race_freed;
static void *free_a2(void *arg) {
  dm_buddy_free(race_b, race_a2);
  race_freed = 1;
  return NULL;
}

static void test_free_waits_for_waiter_instead_of_stranding(void **st) {
  fixture_heap_t f;
  fixture_heap_init_tree(&f, 4 * MiB, 1);
  dm_buddy_t *b = &f.h->buddy;
  /* Allocate leaves until two complete sibling pairs are held: (a0, a1) the
   * lower, (a2, a3) the higher. */
  enum { N = 16 };
  uint64_t held[N], a[4] = {0};
  int n = 0, pairs = 0;
  while (pairs < 2 && n < N) {
    held[n] = dm_buddy_alloc(b, 0);
    assert_true(held[n] != 0);
    for (int j = 0; j < n; j++)
      if ((held[j] ^ 1u) == held[n]) {
        uint64_t lo = held[j] < held[n] ? held[j] : held[n];
        a[2 * pairs] = lo;
        a[2 * pairs + 1] = lo ^ 1u;
        pairs++;
      }
    n++;
  }
  assert_int_equal(pairs, 2);
  if (a[0] > a[2]) { /* order the pairs by address */
    uint64_t t0 = a[0], t1 = a[1];
    a[0] = a[2];
    a[1] = a[3];
    a[2] = t0;
    a[3] = t1;
  }
  dm_buddy_free(b, a[3]);
  assert_int_equal(dm_sem_wait(&b->sem[0], 1, 2), DM_SEM_OK); /* the waiter's unit */
  race_b = b;
  race_a2 = a[2];
  race_freed = 0;
  pthread_t t;
  pthread_create(&t, NULL, free_a2, NULL);
  usleep(50000);
  assert_int_equal(race_freed, 0);     /* it waits: a3 is AVAIL, no unit free */
  dm_buddy_free(b, a[0]);              /* a1 busy: a0 becomes AVAIL */
  uint64_t got = dm_buddy_claim(b, 0); /* the waiter takes a0, not a3 */
  pthread_join(t, NULL);
  assert_int_equal(got, a[0]);
  fixture_assert_consistent(&f); /* a2 and a3 merged */
  dm_buddy_free(b, got);
  dm_buddy_free(b, a[1]);
  for (int j = 0; j < n; j++) /* the other leaves taken on the way */
    if (held[j] != a[0] && held[j] != a[1] && held[j] != a[2] && held[j] != a[3]) dm_buddy_free(b, held[j]);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(f.h));
  fixture_heap_fini(&f);
}

/* The nodes above a run of 2^j blocks under node y, as a warp's lanes join
 * them (lane r, node r): each node of depth 0 .. j - 1 under y once, level
 * by level, left to right. */
static void test_run_nodes(void **st) {
  for (uint64_t y = 1; y < 64; y++)
    for (uint32_t j = 0; j <= 6; j++) {
      uint32_t r = 0;
      for (uint32_t d = 0; d < j; d++)
        for (uint64_t i = y << d; i < (y + 1) << d; i++, r++) assert_int_equal(dm_buddy_run_node(y, r), i);
      assert_int_equal(r, (1u << j) - 1u);
    }
}

/* A run of k blocks (a warp's lanes with one request) is carved from one
 * block: the k blocks are adjacent, busy and freeable one by one, the rest of
 * the block is free as maximal halves (invariants after every step), and the
 * tree is whole when they are all freed, in any order, or (a whole aligned
 * group) at once. */
static void test_runs_carve_adjacent_blocks(void **st) {
  fixture_heap_t f;
  fixture_heap_init_tree(&f, 16 * MiB, 1);
  dm_buddy_t *b = &f.h->buddy;
  uint64_t seed = 7;
  for (uint32_t k = 1; k <= 32; k++) {
    for (uint32_t order = 0; order <= 2; order++) {
      uint64_t first = dm_buddy_alloc_run(b, order, k);
      assert_true(first != 0);
      fixture_assert_consistent(&f);
      uint64_t bytes = 1ull << (order + DM_LEAF_SHIFT), base = dm_buddy_node_offset(b, first);
      uint64_t nodes[32];
      for (uint32_t i = 0; i < k; i++) {
        int why;
        nodes[i] = dm_buddy_lookup(b, base + i * bytes, &why);
        assert_int_equal(why, DM_FREE_OK);
        assert_int_equal(nodes[i], first + i);
        assert_int_equal(dm_buddy_order(b, nodes[i]), order);
        assert_int_equal((base + i * bytes) % bytes, 0);
      }
      if ((k & (k - 1)) == 0 && k > 1 && order == 1) { /* a whole run: freed as one block */
        uint32_t j = (uint32_t)__builtin_ctz(k);
        dm_buddy_free_run(b, first >> j, j);
        fixture_assert_consistent(&f);
        assert_true(dm_heap_is_whole(f.h));
        continue;
      }
      for (uint32_t i = k; i > 1; i--) { /* free in a random order */
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t j = (uint32_t)(seed >> 33) % i;
        uint64_t t = nodes[j];
        nodes[j] = nodes[i - 1];
        nodes[i - 1] = t;
      }
      for (uint32_t i = 0; i < k; i++) {
        dm_buddy_free(b, nodes[i]);
        fixture_assert_consistent(&f);
      }
      assert_true(dm_heap_is_whole(f.h));
    }
  }
  assert_int_equal(dm_buddy_alloc_run(b, b->top, 2), 0); /* larger than the pool */
  fixture_assert_consistent(&f);
  fixture_heap_fini(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fresh_heap_is_whole),
      cmocka_unit_test(test_runs_carve_adjacent_blocks),
      cmocka_unit_test(test_run_nodes),
      cmocka_unit_test(test_split_then_merge),
      cmocka_unit_test(test_fill_every_leaf),
      cmocka_unit_test(test_random_ops_keep_invariants),
      cmocka_unit_test(test_lookup),
      cmocka_unit_test(test_too_large_fails_at_once),
      cmocka_unit_test(test_free_waits_for_waiter_instead_of_stranding),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
