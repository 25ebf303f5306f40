/*
 * test_pool_threads.c — many threads on one pool at once. The chunks are
 * real host memory, so every thread stamps its allocations (first and last
 * word) and checks the stamp before freeing: two threads ever holding
 * overlapping memory shows up as a broken stamp. Threads also free blocks
 * allocated by others (hand-over slots), a trimmer thread trims, a reader
 * reads stats and free bytes. Invariants are checked at the end. Built twice:
 * plain and with -fsanitize=thread (POOL_THREADS_SCALE divides the work).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "pool.h"
#include "test_pool_fake.h"

#ifndef POOL_THREADS_SCALE
#define POOL_THREADS_SCALE 1
#endif
#define NTHREADS 8
#define OPS (200000 / POOL_THREADS_SCALE)
#define LIVE 64
#define SLOTS 256

typedef struct {
  uint64_t addr;
  size_t size;
  uint64_t stamp;
} blk_t;

static dm_pool_t *g_pool;
static _Atomic uint64_t g_slots[SLOTS]; /* hand-over: packed addr (stamp in block) */
static _Atomic size_t g_slot_size[SLOTS];
static _Atomic int g_errors, g_done;
static _Atomic uint64_t g_allocs, g_frees, g_enomem;
static pthread_mutex_t g_src_lock = PTHREAD_MUTEX_INITIALIZER;

/* The source is called under the pool mutex; it has its own lock anyway so
 * the test does not depend on that. */
static fake_src_t g_src;
static int locked_alloc(void *c, size_t b, uint64_t *base) {
  pthread_mutex_lock(&g_src_lock);
  int r = fake_chunk_alloc(c, b, base);
  pthread_mutex_unlock(&g_src_lock);
  return r;
}
static void locked_free(void *c, uint64_t base, size_t b) {
  pthread_mutex_lock(&g_src_lock);
  fake_chunk_free(c, base, b);
  pthread_mutex_unlock(&g_src_lock);
}

/* First word and last word of the 256 B-rounded block. */
static void stamp(uint64_t addr, size_t size, uint64_t v) {
  uint64_t *first = (uint64_t *)(uintptr_t)addr;
  uint64_t *last = (uint64_t *)(uintptr_t)(addr + ((size + 255) & ~(size_t)255) - 8);
  *first = v;
  *last = ~v;
}
static int stamp_ok(uint64_t addr, size_t size, uint64_t v) {
  uint64_t *first = (uint64_t *)(uintptr_t)addr;
  uint64_t *last = (uint64_t *)(uintptr_t)(addr + ((size + 255) & ~(size_t)255) - 8);
  return *first == v && *last == ~v;
}

static void release(uint64_t addr, size_t size, uint64_t v) {
  if (!stamp_ok(addr, size, v)) atomic_fetch_add(&g_errors, 1);
  if (dm_pool_free(g_pool, addr, NULL) != DM_POOL_OK) atomic_fetch_add(&g_errors, 1);
  atomic_fetch_add(&g_frees, 1);
}

static void *worker(void *arg) {
  uint64_t seed = 0x9E3779B97F4A7C15ull * ((uintptr_t)arg + 1);
  blk_t live[LIVE] = {{0}};
  for (int op = 0; op < OPS; op++) {
    int i = (int)(rng_next(&seed) % LIVE);
    if (live[i].addr) {
      if (rng_next(&seed) % 4 == 0) {
        /* hand it to whoever takes slot j; take what was there */
        int j = (int)(rng_next(&seed) % SLOTS);
        /* stamp = address, so a receiver can check without more state */
        stamp(live[i].addr, 8, live[i].addr);
        atomic_store(&g_slot_size[j], 8); /* only the first word is checked */
        uint64_t old = atomic_exchange(&g_slots[j], live[i].addr);
        if (old) release(old, 8, old);
      } else {
        release(live[i].addr, live[i].size, live[i].stamp);
      }
      live[i].addr = 0;
    } else {
      size_t size = rng_size(&seed, 20); /* 1 B .. 1 MiB */
      uint64_t a;
      int rc = dm_pool_alloc(g_pool, size, &a);
      if (rc == DM_POOL_ENOMEM) {
        atomic_fetch_add(&g_enomem, 1);
        continue;
      }
      if (rc != DM_POOL_OK || a % 256) {
        atomic_fetch_add(&g_errors, 1);
        continue;
      }
      live[i] = (blk_t){a, size, rng_next(&seed)};
      stamp(a, size, live[i].stamp);
      atomic_fetch_add(&g_allocs, 1);
    }
  }
  for (int i = 0; i < LIVE; i++)
    if (live[i].addr) release(live[i].addr, live[i].size, live[i].stamp);
  return NULL;
}

static void *trimmer(void *arg) {
  (void)arg;
  while (!atomic_load(&g_done)) {
    dm_pool_trim(g_pool);
    dm_pool_stats_t s;
    dm_pool_get_stats(g_pool, &s);
    if (s.used_bytes > s.chunk_bytes) atomic_fetch_add(&g_errors, 1);
    (void)dm_pool_free_bytes(g_pool);
    (void)dm_pool_contains(g_pool, FAKE_BASE);
  }
  return NULL;
}

static void test_threads(void **st) {
  (void)st;
  g_src.capacity = 28ull << 20; /* tight: growth, trimming and ENOMEM under load */
  g_src.host = 1;
  dm_pool_config_t cfg = {.initial_bytes = 8ull << 20, .grow_bytes = 4ull << 20};
  dm_pool_source_t src = {
      .ctx = &g_src, .chunk_alloc = locked_alloc, .chunk_free = locked_free, .avail = NULL};
  assert_int_equal(dm_pool_create(&cfg, &src, &g_pool), 0);
  pthread_t th[NTHREADS], tr;
  pthread_create(&tr, NULL, trimmer, NULL);
  for (long i = 0; i < NTHREADS; i++) pthread_create(&th[i], NULL, worker, (void *)i);
  for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
  atomic_store(&g_done, 1);
  pthread_join(tr, NULL);
  for (int j = 0; j < SLOTS; j++) {
    uint64_t a = atomic_load(&g_slots[j]);
    if (a) release(a, 8, a);
  }
  assert_int_equal(atomic_load(&g_errors), 0);
  assert_int_equal(atomic_load(&g_allocs), atomic_load(&g_frees));
  const char *why = NULL;
  if (dm_pool_check(g_pool, &why)) fail_msg("pool invariant: %s", why);
  dm_pool_stats_t s;
  dm_pool_get_stats(g_pool, &s);
  assert_int_equal(s.used_segments, 0);
  assert_int_equal(s.free_segments, s.chunks); /* all coalesced */
  printf("  %d threads: %llu allocs, %llu frees, %llu ENOMEM, %llu chunks obtained, %llu released\n",
         NTHREADS, (unsigned long long)s.allocs, (unsigned long long)s.frees,
         (unsigned long long)atomic_load(&g_enomem), (unsigned long long)s.chunks_obtained,
         (unsigned long long)s.chunks_released);
  dm_pool_destroy(g_pool);
  assert_int_equal(g_src.n, 0);
  assert_int_equal(g_src.bad_frees, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_threads)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
