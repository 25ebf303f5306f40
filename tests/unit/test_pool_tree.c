/*
 * test_pool_tree.c — the pool's AVL tree (host/pool/pool_tree.c): invariants
 * (order, balance, heights, parent links, count) after every operation of
 * long random insert/remove sequences, lookups (find, ceil, floor, next,
 * prev) against a sorted-array reference, worst-case insertion orders.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "pool_tree.h"
#include "test_pool_fake.h"

typedef struct {
  uint64_t k1, k2;
} key_t2;

static int kcmp(key_t2 a, key_t2 b) {
  if (a.k1 != b.k1) return a.k1 < b.k1 ? -1 : 1;
  if (a.k2 != b.k2) return a.k2 < b.k2 ? -1 : 1;
  return 0;
}

/* Sorted reference array. */
typedef struct {
  key_t2 *k;
  size_t n;
} ref_t;
static size_t ref_lb(const ref_t *r, key_t2 k) { /* first >= k */
  size_t lo = 0, hi = r->n;
  while (lo < hi) {
    size_t m = (lo + hi) / 2;
    if (kcmp(r->k[m], k) < 0)
      lo = m + 1;
    else
      hi = m;
  }
  return lo;
}

static void assert_tree_ok(const dm_tree_t *t) {
  const char *why = NULL;
  int rc = dm_tree_check(t, &why);
  if (rc) fail_msg("tree invariant broken: %s", why);
}

static void max_height_ok(const dm_tree_t *t) {
  /* AVL height < 1.4405 log2(n + 2) */
  if (!t->root) return;
  double bound = 1.4405 * log2((double)t->count + 2.0);
  if (t->root->height > bound) fail_msg("height %d > %.1f for n=%zu", t->root->height, bound, t->count);
}

static void run_random(uint64_t seed, int steps, int cap, int key_range, int check_every) {
  dm_tnode_t *nodes = calloc((size_t)cap, sizeof *nodes);
  int *in = calloc((size_t)cap, sizeof *in);
  ref_t ref = {calloc((size_t)cap, sizeof(key_t2)), 0};
  dm_tree_t t;
  dm_tree_init(&t);
  uint64_t s = seed;
  for (int step = 0; step < steps; step++) {
    int i = (int)(rng_next(&s) % (uint64_t)cap);
    if (!in[i]) {
      /* keys: small k1 range forces many ties broken by k2 */
      nodes[i].k1 = rng_next(&s) % (uint64_t)key_range;
      nodes[i].k2 = (uint64_t)i;
      key_t2 k = {nodes[i].k1, nodes[i].k2};
      assert_int_equal(dm_tree_insert(&t, &nodes[i]), DM_TREE_OK);
      size_t at = ref_lb(&ref, k);
      memmove(&ref.k[at + 1], &ref.k[at], (ref.n - at) * sizeof(key_t2));
      ref.k[at] = k;
      ref.n++;
      in[i] = 1;
      /* a duplicate key is refused and changes nothing */
      dm_tnode_t dup = {.k1 = k.k1, .k2 = k.k2};
      assert_int_equal(dm_tree_insert(&t, &dup), DM_TREE_EEXIST);
    } else {
      key_t2 k = {nodes[i].k1, nodes[i].k2};
      assert_ptr_equal(dm_tree_find(&t, k.k1, k.k2), &nodes[i]);
      dm_tree_remove(&t, &nodes[i]);
      size_t at = ref_lb(&ref, k);
      assert_true(at < ref.n && kcmp(ref.k[at], k) == 0);
      memmove(&ref.k[at], &ref.k[at + 1], (ref.n - at - 1) * sizeof(key_t2));
      ref.n--;
      in[i] = 0;
      assert_null(dm_tree_find(&t, k.k1, k.k2));
    }
    assert_int_equal(t.count, ref.n);
    /* ceil / floor of a random key against the reference */
    key_t2 q = {rng_next(&s) % (uint64_t)(key_range + 1), rng_next(&s) % (uint64_t)cap};
    size_t lb = ref_lb(&ref, q);
    dm_tnode_t *c = dm_tree_ceil(&t, q.k1, q.k2);
    if (lb == ref.n)
      assert_null(c);
    else {
      assert_non_null(c);
      assert_true(c->k1 == ref.k[lb].k1 && c->k2 == ref.k[lb].k2);
    }
    dm_tnode_t *f = dm_tree_floor(&t, q.k1, q.k2);
    size_t fi = (lb < ref.n && kcmp(ref.k[lb], q) == 0) ? lb + 1 : lb; /* count of <= q */
    if (fi == 0)
      assert_null(f);
    else {
      assert_non_null(f);
      assert_true(f->k1 == ref.k[fi - 1].k1 && f->k2 == ref.k[fi - 1].k2);
    }
    if (step % check_every == 0) {
      assert_tree_ok(&t);
      max_height_ok(&t);
      /* full in-order traversal both ways */
      size_t j = 0;
      for (dm_tnode_t *n = dm_tree_first(&t); n; n = dm_tree_next(n), j++)
        assert_true(n->k1 == ref.k[j].k1 && n->k2 == ref.k[j].k2);
      assert_int_equal(j, ref.n);
      for (dm_tnode_t *n = dm_tree_last(&t); n; n = dm_tree_prev(n)) j--;
      assert_int_equal(j, 0);
    }
  }
  assert_tree_ok(&t);
  free(nodes);
  free(in);
  free(ref.k);
}

static void test_random_small(void **st) {
  (void)st;
  run_random(1, 200000, 256, 64, 1);
}
static void test_random_wide(void **st) {
  (void)st;
  run_random(7, 400000, 20000, 1 << 30, 1000);
}

static void test_sequential_orders(void **st) {
  (void)st;
  enum { N = 100000 };
  dm_tnode_t *nodes = calloc(N, sizeof *nodes);
  for (int order = 0; order < 3; order++) {
    dm_tree_t t;
    dm_tree_init(&t);
    for (int i = 0; i < N; i++) {
      int k = order == 0 ? i : order == 1 ? N - 1 - i : (i % 2 ? i / 2 : N - 1 - i / 2);
      nodes[i].k1 = (uint64_t)k;
      nodes[i].k2 = 0;
      assert_int_equal(dm_tree_insert(&t, &nodes[i]), 0);
    }
    assert_tree_ok(&t);
    max_height_ok(&t);
    assert_int_equal(dm_tree_first(&t)->k1, 0);
    assert_int_equal(dm_tree_last(&t)->k1, N - 1);
    /* remove every other node, then the rest, in key order */
    for (int i = 0; i < N; i += 2) dm_tree_remove(&t, dm_tree_find(&t, (uint64_t)i, 0));
    assert_tree_ok(&t);
    max_height_ok(&t);
    assert_int_equal(t.count, N / 2);
    while (t.root) dm_tree_remove(&t, dm_tree_first(&t));
    assert_int_equal(t.count, 0);
  }
  free(nodes);
}

static void test_check_detects_corruption(void **st) {
  (void)st;
  dm_tnode_t n[3] = {{.k1 = 1}, {.k1 = 2}, {.k1 = 3}};
  dm_tree_t t;
  dm_tree_init(&t);
  for (int i = 0; i < 3; i++) dm_tree_insert(&t, &n[i]);
  assert_int_equal(dm_tree_check(&t, NULL), 0);
  uint64_t saved = n[0].k1;
  n[0].k1 = 9; /* order broken */
  assert_int_equal(dm_tree_check(&t, NULL), DM_TREE_ECORRUPT);
  n[0].k1 = saved;
  t.count++;
  assert_int_equal(dm_tree_check(&t, NULL), DM_TREE_ECORRUPT);
  t.count--;
  n[1].height = 7;
  assert_int_equal(dm_tree_check(&t, NULL), DM_TREE_ECORRUPT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_small),
      cmocka_unit_test(test_random_wide),
      cmocka_unit_test(test_sequential_orders),
      cmocka_unit_test(test_check_detects_corruption),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
