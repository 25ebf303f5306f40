/* test_stress.c — many threads, millions of mixed malloc/free of sizes from
 * 1 B to the pool size. Every live block is checked against shadow maps (no
 * two overlap), is aligned as promised, keeps its contents; after everything
 * is freed the pool is whole again and the counters balance. Built a second
 * time under ThreadSanitizer with fewer operations (STRESS_SCALE), and with
 * the chaos switch (DM_CHAOS: yields at the allocator's racy points) with
 * more threads than cores and other heap sizes and arena counts
 * (STRESS_THREADS, STRESS_HEAP, STRESS_ARENAS; mk/core.mk). */
#include <pthread.h>
#include "devmalloc.h"
#include "test_common.h"

#ifndef STRESS_SCALE
#define STRESS_SCALE 1
#endif
#ifndef STRESS_THREADS
#define STRESS_THREADS 8
#endif
#ifndef STRESS_HEAP
#define STRESS_HEAP (64ull << 20)
#endif
#ifndef STRESS_ARENAS
#define STRESS_ARENAS 4
#endif
#define THREADS STRESS_THREADS
#define OPS_PER_THREAD (1000000 / STRESS_SCALE)
#define LIVE 256
#define HEAP ((uint64_t)STRESS_HEAP)

static fixture_heap_t f;
static uint8_t *fine;    /* per 16 B granule: 1 while a small block covers it */
static uint32_t *coarse; /* per 16 KiB: owner+1 of a large block covering it */
static uint32_t *smalls; /* per 16 KiB: live small blocks inside */

static uint64_t rng(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static uint64_t pick_size(uint64_t *s) {
  uint64_t r = rng(s);
  int e;
  if (r % 100 < 85)
    e = (int)(rng(s) % 13); /* 1 B .. 8 KiB */
  else
    e = 13 + (int)(rng(s) % 14); /* 8 KiB .. 64 MiB */
  uint64_t lo = 1ull << e;
  return lo + rng(s) % lo;
}

static uint64_t block_align(uint64_t size) {
  if (size <= DM_SLAB_MAX) return 16;
  uint64_t b = 1ull << DM_LEAF_SHIFT;
  while (b < size) b <<= 1;
  return b < (2u << 20) ? b : (2u << 20);
}

typedef struct {
  char *p;
  uint64_t size, tag;
} live_t;

static void claim(char *p, uint64_t size, uint32_t who) {
  uint64_t off = (uint64_t)(p - f.h->buddy.base);
  if (size <= DM_SLAB_MAX) {
    __atomic_add_fetch(&smalls[off >> 14], 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&coarse[off >> 14], __ATOMIC_SEQ_CST)) fail_msg("small block inside a large one");
    for (uint64_t g = off >> 4; g <= (off + size - 1) >> 4; g++)
      if (__atomic_exchange_n(&fine[g], 1, __ATOMIC_SEQ_CST)) fail_msg("small blocks overlap at %p", p);
  } else {
    for (uint64_t c = off >> 14; c <= (off + size - 1) >> 14; c++) {
      uint32_t z = 0;
      if (!__atomic_compare_exchange_n(&coarse[c], &z, who + 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
        fail_msg("large blocks overlap at %p", p);
      if (__atomic_load_n(&smalls[c], __ATOMIC_SEQ_CST)) fail_msg("large block over small ones");
    }
  }
}

static void release(char *p, uint64_t size) {
  uint64_t off = (uint64_t)(p - f.h->buddy.base);
  if (size <= DM_SLAB_MAX) {
    for (uint64_t g = off >> 4; g <= (off + size - 1) >> 4; g++)
      __atomic_store_n(&fine[g], 0, __ATOMIC_SEQ_CST);
    __atomic_sub_fetch(&smalls[off >> 14], 1, __ATOMIC_SEQ_CST);
  } else {
    for (uint64_t c = off >> 14; c <= (off + size - 1) >> 14; c++)
      __atomic_store_n(&coarse[c], 0, __ATOMIC_SEQ_CST);
  }
}

static void stamp(live_t *l) {
  memcpy(l->p, &l->tag, l->size < 8 ? l->size : 8);
  if (l->size >= 16) memcpy(l->p + l->size - 8, &l->tag, 8);
}

static void verify(const live_t *l) {
  uint64_t a = 0, b = 0;
  memcpy(&a, l->p, l->size < 8 ? l->size : 8);
  uint64_t want = 0;
  memcpy(&want, &l->tag, l->size < 8 ? l->size : 8);
  if (a != want) fail_msg("block %p lost its contents", l->p);
  if (l->size >= 16) {
    memcpy(&b, l->p + l->size - 8, 8);
    if (b != l->tag) fail_msg("block %p lost its tail", l->p);
  }
}

static void *stress_thread(void *arg) {
  uint32_t who = (uint32_t)(uintptr_t)arg;
  uint64_t s = 0x9E3779B97F4A7C15ull * (who + 1);
  live_t live[LIVE] = {0};
  for (int op = 0; op < OPS_PER_THREAD; op++) {
    live_t *l = &live[rng(&s) % LIVE];
    if (l->p) {
      verify(l);
      release(l->p, l->size);
      if (dm_free(f.h, l->p) != DM_FREE_OK) fail_msg("valid free refused");
      l->p = NULL;
      continue;
    }
    uint64_t size = pick_size(&s);
    char *p = dm_malloc(f.h, size, 16);
    if (!p) continue; /* out of memory is allowed, hanging is not */
    if ((uintptr_t)p % block_align(size)) fail_msg("%p not aligned for %llu B", p, (unsigned long long)size);
    if (p < f.h->buddy.base || p + size > f.h->buddy.base + f.h->buddy.pool_bytes)
      fail_msg("outside the pool");
    claim(p, size, who);
    *l = (live_t){p, size, rng(&s)};
    stamp(l);
  }
  for (int i = 0; i < LIVE; i++)
    if (live[i].p) {
      verify(&live[i]);
      release(live[i].p, live[i].size);
      dm_free(f.h, live[i].p);
    }
  return NULL;
}

/* A heap of `bytes` with shadow maps; THREADS threads run fn(thread index);
 * then the heap must be consistent and whole. shadowed_fini() frees it. */
static void run_shadowed(uint64_t bytes, unsigned narenas, void *(*fn)(void *)) {
  fixture_heap_init(&f, bytes, narenas);
  fine = calloc((bytes >> 4) + 1, 1);
  coarse = calloc((bytes >> 14) + 1, sizeof *coarse);
  smalls = calloc((bytes >> 14) + 1, sizeof *smalls);
  pthread_t t[THREADS];
  for (uintptr_t i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, fn, (void *)i);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  fixture_assert_consistent(&f);
  char why[160] = "";
  if (!dm_heap_whole(f.h, why, sizeof why)) fail_msg("not whole: %s", why);
}

static void shadowed_fini(void) {
  free(fine);
  free(coarse);
  free(smalls);
  fixture_heap_fini(&f);
}

static void test_stress(void **st) {
  run_shadowed(HEAP, STRESS_ARENAS, stress_thread);
  devmalloc_stats_t s;
  dm_heap_read_stats(f.h, f.h->astats, f.h->hstats, &s);
  printf("stress: %d threads, %llu allocations, %llu frees, %llu failures, peak %.1f MiB\n", THREADS,
         (unsigned long long)s.allocs, (unsigned long long)s.frees, (unsigned long long)s.failures,
         s.peak_bytes / 1048576.0);
  assert_int_equal(s.allocs, s.frees);
  assert_int_equal(s.bytes_in_use, 0);
  assert_int_equal(s.double_frees + s.foreign_frees, 0);
  assert_true(s.allocs > (uint64_t)THREADS * OPS_PER_THREAD / 4);
  assert_true(s.peak_bytes <= f.h->buddy.pool_bytes);
  shadowed_fini();
}

/* Threads free the slots of the same chunks at once (slot i by thread
 * i % THREADS): whichever free empties a chunk must find every other free's
 * units signalled and return the chunk, so the pool is whole after each
 * round. (Freeing chunk-mates from different warps at once left empty chunks
 * held when units were signalled after the count dropped.) */
#define XFREE_BLOCKS 20000
static void *xfree_ptrs[XFREE_BLOCKS];
static pthread_barrier_t xfree_go;

static void *xfree_thread(void *arg) {
  uintptr_t me = (uintptr_t)arg;
  pthread_barrier_wait(&xfree_go);
  for (uint32_t i = (uint32_t)me; i < XFREE_BLOCKS; i += THREADS)
    if (dm_free(f.h, xfree_ptrs[i]) != DM_FREE_OK) fail_msg("valid free refused");
  return NULL;
}

static void test_cross_thread_frees_return_chunks(void **st) {
  fixture_heap_init(&f, HEAP, 4);
  for (int round = 0; round < 20 / STRESS_SCALE + 2; round++) {
    uint64_t size = 16u << (round % 6); /* 16 B .. 512 B: 8..256 chunks */
    for (uint32_t i = 0; i < XFREE_BLOCKS; i++) {
      xfree_ptrs[i] = dm_malloc(f.h, size, 16);
      assert_non_null(xfree_ptrs[i]);
    }
    pthread_barrier_init(&xfree_go, NULL, THREADS);
    pthread_t t[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, xfree_thread, (void *)i);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&xfree_go);
    char why[160] = "";
    fixture_assert_consistent(&f);
    if (!dm_heap_whole(f.h, why, sizeof why))
      fail_msg("round %d (%llu B): %s", round, (unsigned long long)size, why);
  }
  fixture_heap_fini(&f);
}

/* A tight heap (a few dozen chunks) and small blocks in waves: each thread
 * (its own arena) takes up to WAVE blocks of a class of 1..2 KiB, then frees
 * them all, out of phase with the others. The tree runs dry at once, so the
 * chunks one arena emptied are taken by another (the class's stack of
 * emptied chunks) or go through reclaim passes, while their old arena may
 * still pin, free into or release them. Blocks must never overlap or lose
 * their contents, and the heap must be consistent and whole at the end. */
#define WAVE 600
#define TIGHT (HEAP < (8ull << 20) ? HEAP : (8ull << 20))
static void *wave_thread(void *arg) {
  uint32_t who = (uint32_t)(uintptr_t)arg;
  uint64_t s = 0xD1B54A32D192ED03ull * (who + 1);
  live_t *l = calloc(WAVE, sizeof *l);
  static const uint64_t sizes[] = {1024, 1024, 2048, 1500};
  for (int round = 0; round < 400 / STRESS_SCALE + 5; round++) {
    uint64_t size = sizes[(round + who) % 4];
    uint32_t n = 0, want = 1 + (uint32_t)(rng(&s) % WAVE);
    while (n < want) {
      char *p = dm_malloc(f.h, size, 16);
      if (!p) break;
      if (p < f.h->buddy.base || p + size > f.h->buddy.base + f.h->buddy.pool_bytes)
        fail_msg("outside the pool");
      claim(p, size, who);
      l[n] = (live_t){p, size, rng(&s)};
      stamp(&l[n++]);
    }
    for (uint32_t i = 0; i < n; i++) {
      verify(&l[i]);
      release(l[i].p, l[i].size);
      if (dm_free(f.h, l[i].p) != DM_FREE_OK) fail_msg("valid free refused");
    }
  }
  free(l);
  return NULL;
}

static void test_tight_heap_waves(void **st) {
  run_shadowed(TIGHT, STRESS_ARENAS > 1 ? STRESS_ARENAS : 2, wave_thread);
  devmalloc_stats_t s;
  dm_heap_read_stats(f.h, f.h->astats, f.h->hstats, &s);
  assert_int_equal(s.allocs, s.frees);
  assert_int_equal(s.double_frees + s.foreign_frees, 0);
  assert_true(s.peak_bytes <= f.h->buddy.pool_bytes);
  shadowed_fini();
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_stress),
                                     cmocka_unit_test(test_cross_thread_frees_return_chunks),
                                     cmocka_unit_test(test_tight_heap_waves)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
