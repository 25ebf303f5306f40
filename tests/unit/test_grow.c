/*
 * test_grow.c — a heap that grows, for real on the host: the core (device/
 * grow.c with the buddy tree and slab) in allocator threads, the host's
 * service thread and trim (host/heap/grower.c) over a fake driver that
 * "reserves" with mmap(PROT_NONE), "maps" with mprotect(RW) (filling the
 * new memory with garbage: the allocator must not rely on zeroed memory) and
 * "unmaps" with madvise + mprotect(PROT_NONE). Touching memory that is not
 * mapped crashes the test, so a block handed out above the mapped top, or
 * memory unmapped under a live block, cannot go unnoticed: every block is
 * written at both ends when it is allocated and checked before it is freed.
 *
 * Cases: formatting and the checker; lazy release of mapped memory; growth
 * by the service thread while threads allocate (slab and large blocks); a
 * large block beyond the mapped top; the maximum reached (NULL, bounded);
 * the device "full" (map refused: NULL at once); no service thread (the
 * wait ends at its bound); trim after frees (mapped bytes drop, the heap
 * grows again afterwards); trims racing allocating threads; the service
 * thread wakes less when idle and still serves targets raised afterwards.
 */
#include "test_common.h"
#include <pthread.h>
#include <sys/mman.h>
#include <time.h>
#include "growth.h"

typedef struct {
  char *raw, *va;
  size_t raw_bytes;
  dm_layout_t L;
  dm_heap_t *h;
  dm_grow_host_t x;
  uint64_t limit; /* fake device memory for the pool (0: unlimited) */
  uint64_t maps, unmaps;
  dm_grower_t *g;
} gheap_t;

static void write_host(void *ctx, uint64_t off, const void *src, uint64_t n) {
  memcpy((char *)ctx + off, src, n);
}
static void fill_host(void *ctx, uint64_t off, uint32_t v, uint64_t count) {
  uint32_t *p = (uint32_t *)((char *)ctx + off);
  for (uint64_t i = 0; i < count; i++) p[i] = v;
}

static int fake_map(void *ctx, uint64_t off, uint64_t n) {
  gheap_t *f = ctx;
  if (f->limit && off + n > f->limit) return 1;
  if (mprotect(f->va + off, n, PROT_READ | PROT_WRITE) != 0) return -1;
  memset(f->va + off, 0xA5, n);
  __atomic_add_fetch(&f->maps, 1, __ATOMIC_SEQ_CST);
  return 0;
}
static void fake_unmap(void *ctx, uint64_t off, uint64_t n) {
  gheap_t *f = ctx;
  madvise(f->va + off, n, MADV_DONTNEED);
  mprotect(f->va + off, n, PROT_NONE);
  __atomic_add_fetch(&f->unmaps, 1, __ATOMIC_SEQ_CST);
}
static const dm_grow_ops_t fake_ops = {fake_map, fake_unmap, NULL};

/* A growing heap with a pool of `pool` bytes, nothing mapped, no thread. */
static void gheap_init(gheap_t *f, uint64_t pool, uint64_t wait_ms) {
  memset(f, 0, sizeof *f);
  assert_int_equal(dm_layout_compute_grow(pool, 4, &f->L), 0);
  uint64_t va_bytes = (f->L.total + DM_GROW_BYTES - 1) / DM_GROW_BYTES * DM_GROW_BYTES;
  f->raw_bytes = va_bytes + DM_GROW_BYTES;
  f->raw = mmap(NULL, f->raw_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  assert_true(f->raw != MAP_FAILED);
  f->va = (char *)(((uintptr_t)f->raw + DM_GROW_BYTES - 1) & ~(uintptr_t)(DM_GROW_BYTES - 1));
  uint64_t meta = f->L.pool_bytes;
  assert_int_equal(mprotect(f->va + meta, va_bytes - meta, PROT_READ | PROT_WRITE), 0);
  dm_heap_t img;
  dm_heap_build(&f->L, (uint64_t)(uintptr_t)f->va, f->L.total, &img);
  assert_non_null(img.grow);
  img.ghost = &f->x;
  img.grow_watermark = 2ull << 20;
  img.grow_step = 4ull << 20;
  img.grow_wait_ns = wait_ms * 1000000ull;
  dm_heap_format_grow(&f->L, &img, write_host, fill_host, f->va);
  f->h = (dm_heap_t *)(f->va + f->L.heap_off);
}

static void gheap_start(gheap_t *f, uint64_t initial, uint64_t step) {
  dm_grow_cfg_t c = {f->L.pool_bytes, initial, step, 20000};
  int err;
  f->g = dm_grower_start(&f->x, &c, &fake_ops, f, &err);
  assert_non_null(f->g);
  assert_int_equal(err, 0);
}

static void gheap_fini(gheap_t *f) {
  if (f->g) dm_grower_stop(f->g);
  munmap(f->raw, f->raw_bytes);
}

static void assert_consistent(const dm_heap_t *h) {
  char why[160] = "";
  int n = dm_heap_check(h, why, sizeof why);
  if (n) fail_msg("heap inconsistent: %d violations, first: %s", n, why);
}

/* The trim's claim, "launched": run here, result where a kernel writes it. */
static int claim_cb(void *arg, uint64_t floor, uint64_t unit) {
  dm_heap_t *h = arg;
  uint64_t r = dm_grow_trim(h, floor, unit);
  __atomic_store_n(&h->ghost->trim_result, r, __ATOMIC_SEQ_CST);
  return 0;
}
static int terr;

static uint64_t block_bytes(uint64_t size) { return size < 64 ? 64 : size; }
static void touch(char *p, uint64_t size, uint8_t v) {
  p[0] = (char)v;
  p[size - 1] = (char)v;
}
static int intact(const char *p, uint64_t size, uint8_t v) {
  return (uint8_t)p[0] == v && (uint8_t)p[size - 1] == v;
}

/* ---------------------------------------------------------------- cases -- */
static void test_format(void **st) {
  gheap_t f;
  gheap_init(&f, 64ull << 20, 1);
  assert_consistent(f.h);
  assert_true(dm_heap_is_whole(f.h));
  assert_int_equal(dm_grow_released(f.h), 0);
  /* nothing mapped, no service thread: NULL at once, nothing touched */
  assert_null(dm_malloc(f.h, 16, 16));
  assert_null(dm_malloc(f.h, 1 << 20, 16));
  assert_consistent(f.h);
  /* a free of memory held by the grower is foreign and changes nothing */
  assert_int_equal(dm_free(f.h, f.va + (4u << 20)), DM_FREE_FOREIGN);
  assert_consistent(f.h);
  gheap_fini(&f);
}

/* Mapped memory is given to the tree when a request finds the tree empty,
 * and no more than that. */
static void test_lazy_release(void **st) {
  gheap_t f;
  gheap_init(&f, 64ull << 20, 1);
  assert_int_equal(fake_map(&f, 0, 4u << 20), 0);
  f.x.mapped = 4u << 20;
  char *p[64];
  int n = 0;
  while (n < 64 && (p[n] = dm_malloc(f.h, 128u << 10, 16)) != NULL) touch(p[n++], 128u << 10, 7);
  assert_int_equal(n, 32); /* exactly the mapped 4 MiB */
  assert_int_equal(dm_grow_released(f.h), 4u << 20);
  assert_consistent(f.h);
  for (int i = 0; i < n; i++) assert_int_equal(dm_free(f.h, p[i]), DM_FREE_OK);
  assert_consistent(f.h);
  assert_true(dm_heap_is_whole(f.h));
  gheap_fini(&f);
}

typedef struct {
  gheap_t *f;
  int seed;
  uint64_t live_bytes_goal;
  int churn; /* free and allocate in a loop (for the trim race) */
  int *stop;
  uint64_t got, nulls, bad;
  pthread_barrier_t *hold; /* non-churn: every thread holds its blocks until all have them */
} worker_t;

static const uint64_t sizes[] = {16, 48, 256, 1000, 4096, 8192, 20000, 100000, 300000, 1u << 20};

static void *worker(void *arg) {
  worker_t *w = arg;
  uint32_t r = (uint32_t)w->seed * 2654435761u + 1;
  size_t cap = 1 << 16, n = 0;
  char **p = malloc(cap * sizeof *p);
  uint64_t *sz = malloc(cap * sizeof *sz), live = 0;
  for (int it = 0; it < 4000000; it++) {
    if (w->stop && __atomic_load_n(w->stop, __ATOMIC_SEQ_CST)) break;
    r ^= r << 13;
    r ^= r >> 17;
    r ^= r << 5;
    int grow = w->churn ? (n == 0 || (r & 1)) && n < cap : live < w->live_bytes_goal && n < cap;
    if (!w->churn && !grow) break;
    if (grow) {
      uint64_t s = sizes[(r >> 8) % (sizeof sizes / sizeof sizes[0])];
      char *q = dm_malloc(w->f->h, s, 16);
      if (!q) {
        w->nulls++;
        if (!w->churn) break;
        continue;
      }
      touch(q, s, (uint8_t)(n + w->seed));
      p[n] = q;
      sz[n++] = s;
      live += block_bytes(s);
      w->got++;
    } else {
      size_t i = (r >> 4) % n;
      if (!intact(p[i], sz[i], (uint8_t)(i + w->seed))) {
        w->bad++;
        fprintf(stderr, "damaged block %p size %llu (offset %llu)\n", (void *)p[i], (unsigned long long)sz[i],
                (unsigned long long)(p[i] - w->f->va));
      }
      int fs = dm_free(w->f->h, p[i]);
      if (fs != DM_FREE_OK) {
        w->bad++;
        fprintf(stderr, "free of %p size %llu (offset %llu): %d (released %llu, mapped %llu)\n", (void *)p[i],
                (unsigned long long)sz[i], (unsigned long long)(p[i] - w->f->va), fs,
                (unsigned long long)dm_grow_released(w->f->h),
                (unsigned long long)__atomic_load_n(&w->f->x.mapped, __ATOMIC_SEQ_CST));
      }
      live -= block_bytes(sz[i]);
      p[i] = p[--n];
      sz[i] = sz[n];
      if (i < n) touch(p[i], sz[i], (uint8_t)(i + w->seed));
    }
  }
  if (w->hold) pthread_barrier_wait(w->hold);
  for (size_t i = 0; i < n; i++) {
    if (!intact(p[i], sz[i], (uint8_t)(i + w->seed))) w->bad++;
    if (dm_free(w->f->h, p[i]) != DM_FREE_OK) w->bad++;
  }
  free(p);
  free(sz);
  return NULL;
}

static void run_workers(gheap_t *f, int nthreads, uint64_t goal_each, int churn, int *stop, worker_t *w) {
  pthread_t t[16];
  pthread_barrier_t hold;
  pthread_barrier_init(&hold, NULL, (unsigned)nthreads);
  for (int i = 0; i < nthreads; i++) {
    w[i] = (worker_t){f, i + 1, goal_each, churn, stop, 0, 0, 0, &hold};
    pthread_create(&t[i], NULL, worker, &w[i]);
  }
  for (int i = 0; i < nthreads; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&hold);
}

/* Threads allocate 8 x 24 MiB from a heap that starts with 4 MiB mapped. */
static void test_grow_under_load(void **st) {
  gheap_t f;
  gheap_init(&f, 512ull << 20, 2000);
  gheap_start(&f, 4u << 20, 4u << 20);
  worker_t w[8];
  run_workers(&f, 8, 24u << 20, 0, NULL, w);
  uint64_t nulls = 0;
  for (int i = 0; i < 8; i++) {
    assert_int_equal(w[i].bad, 0);
    nulls += w[i].nulls;
  }
  assert_int_equal(nulls, 0);
  dm_grower_stats_t s;
  dm_grower_stats(f.g, &s);
  printf("  grew %llu times, peak %llu MiB mapped, %llu maps, waits %llu\n", (unsigned long long)s.events,
         (unsigned long long)(s.peak >> 20), (unsigned long long)__atomic_load_n(&f.maps, __ATOMIC_SEQ_CST),
         (unsigned long long)__atomic_load_n(&f.h->grow->waits, __ATOMIC_SEQ_CST));
  assert_true(s.events > 0);
  assert_true(s.peak >= 192u << 20);
  assert_true(s.peak <= f.L.pool_bytes);
  assert_consistent(f.h);
  assert_true(dm_heap_is_whole(f.h));
  /* everything is free: trim takes the heap back to its initial size */
  uint64_t freed = dm_grower_trim(f.g, 0, claim_cb, f.h, &terr);
  dm_grower_stats(f.g, &s);
  printf("  trim unmapped %llu MiB, %llu MiB left mapped\n", (unsigned long long)(freed >> 20),
         (unsigned long long)(s.mapped >> 20));
  assert_int_equal(s.mapped, 4u << 20);
  assert_int_equal(__atomic_load_n(&f.x.mapped, __ATOMIC_SEQ_CST), 4u << 20);
  assert_true(dm_grow_released(f.h) <= 4u << 20);
  assert_consistent(f.h);
  assert_true(dm_heap_is_whole(f.h));
  /* and it grows again */
  run_workers(&f, 4, 16u << 20, 0, NULL, w);
  for (int i = 0; i < 4; i++) assert_int_equal(w[i].nulls + w[i].bad, 0);
  assert_consistent(f.h);
  gheap_fini(&f);
}

/* A large block far above the mapped top: the host maps up to it. */
static void test_large_block(void **st) {
  gheap_t f;
  gheap_init(&f, 256ull << 20, 2000);
  gheap_start(&f, 4u << 20, 4u << 20);
  char *small = dm_malloc(f.h, 100, 16);
  assert_non_null(small);
  char *big = dm_malloc(f.h, 64u << 20, 16);
  assert_non_null(big);
  memset(big, 1, 64u << 20);
  assert_true(__atomic_load_n(&f.x.mapped, __ATOMIC_SEQ_CST) >= (uint64_t)(big - f.va) + (64u << 20));
  assert_int_equal(dm_free(f.h, big), DM_FREE_OK);
  assert_int_equal(dm_free(f.h, small), DM_FREE_OK);
  assert_consistent(f.h);
  assert_true(dm_heap_is_whole(f.h));
  /* more than the pool: NULL at once */
  assert_null(dm_malloc(f.h, 512u << 20, 16));
  gheap_fini(&f);
}

/* Growth ahead of need starts once less than a quarter of the released
 * memory is free, even with more than the watermark (2 MiB here) free. */
static void test_ahead_at_a_quarter(void **st) {
  gheap_t f;
  gheap_init(&f, 256ull << 20, 2000);
  gheap_start(&f, 64u << 20, 4u << 20);
  char *a = dm_malloc(f.h, 32u << 20, 16);
  assert_non_null(a);
  uint64_t r = __atomic_load_n(&f.h->grow->released, __ATOMIC_SEQ_CST);
  assert_int_equal(r, 64u << 20);
  assert_true(__atomic_load_n(&f.x.target, __ATOMIC_SEQ_CST) <= r); /* half free: no ask */
  char *b = dm_malloc(f.h, 16u << 20, 16), *c = dm_malloc(f.h, 2u << 20, 16);
  assert_non_null(b);
  assert_non_null(c);
  assert_int_equal(__atomic_load_n(&f.h->grow->released, __ATOMIC_SEQ_CST), r); /* 14 MiB free */
  assert_true(__atomic_load_n(&f.x.target, __ATOMIC_SEQ_CST) > r);
  assert_int_equal(dm_free(f.h, a), DM_FREE_OK);
  assert_int_equal(dm_free(f.h, b), DM_FREE_OK);
  assert_int_equal(dm_free(f.h, c), DM_FREE_OK);
  assert_consistent(f.h);
  gheap_fini(&f);
}

/* The maximum: threads fill the pool; every thread ends with NULL. */
static void test_maximum(void **st) {
  gheap_t f;
  gheap_init(&f, 64ull << 20, 500);
  gheap_start(&f, 4u << 20, 4u << 20);
  worker_t w[4];
  run_workers(&f, 4, 1ull << 40, 0, NULL, w);
  for (int i = 0; i < 4; i++) {
    assert_int_equal(w[i].bad, 0);
    assert_int_equal(w[i].nulls, 1);
  }
  assert_int_equal(__atomic_load_n(&f.x.mapped, __ATOMIC_SEQ_CST), 64u << 20);
  assert_consistent(f.h);
  assert_true(dm_heap_is_whole(f.h));
  gheap_fini(&f);
}

/* A heap that grows, at its maximum (everything mapped from the start), is a
 * fixed heap: requests that fit get memory. The first requests race with the
 * one that gives the mapped granules to the tree: one that found the tree
 * empty and `released` at the maximum got NULL while the granules were on
 * their way (a heap whose limit equals its initial size failed small
 * requests at start). */
static void test_at_maximum_serves_what_fits(void **st) {
  gheap_t f;
  gheap_init(&f, 64ull << 20, 500);
  gheap_start(&f, 64u << 20, 4u << 20);
  for (int round = 0; round < 20; round++) {
    worker_t w[4];
    run_workers(&f, 4, 2ull << 20, 0, NULL, w);
    for (int i = 0; i < 4; i++) {
      assert_int_equal(w[i].bad, 0);
      if (w[i].nulls)
        fail_msg("round %d: thread %d got NULL; all threads together ask for 8 of 64 MiB", round, i);
    }
  }
  assert_consistent(f.h);
  assert_true(dm_heap_is_whole(f.h));
  gheap_fini(&f);
}

static double secs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The "device" has 16 MiB for the pool: the map is refused and requests end
 * in NULL well before the wait bound (10 s here). */
static void test_device_full(void **st) {
  gheap_t f;
  gheap_init(&f, 256ull << 20, 10000);
  f.limit = 16u << 20;
  gheap_start(&f, 4u << 20, 4u << 20);
  double t0 = secs();
  worker_t w[2];
  run_workers(&f, 2, 1ull << 40, 0, NULL, w);
  for (int i = 0; i < 2; i++) assert_int_equal(w[i].nulls, 1);
  assert_true(secs() - t0 < 5.0);
  assert_int_equal(__atomic_load_n(&f.x.mapped, __ATOMIC_SEQ_CST), 16u << 20);
  dm_grower_stats_t s;
  dm_grower_stats(f.g, &s);
  assert_true(s.refusals > 0);
  assert_consistent(f.h);
  gheap_fini(&f);
}

/* Nobody answers (alive but no thread): the wait ends at its bound. */
static void test_wait_bound(void **st) {
  gheap_t f;
  gheap_init(&f, 64ull << 20, 50);
  f.x.alive = 1;
  double t0 = secs();
  assert_null(dm_malloc(f.h, 16, 16));
  double dt = secs() - t0;
  assert_true(dt >= 0.045 && dt < 2.0);
  assert_true(f.h->grow->timeouts >= 1);
  assert_true(f.x.target >= DM_GROW_BYTES);
  f.x.alive = 0; /* a stopped service: NULL at once */
  t0 = secs();
  assert_null(dm_malloc(f.h, 16, 16));
  assert_true(secs() - t0 < 0.04);
  assert_consistent(f.h);
  gheap_fini(&f);
}

/* Trims race threads that allocate and free: memory is only unmapped when
 * no block lives in it (else the workers crash or find their blocks
 * damaged). */
static void test_trim_race(void **st) {
  gheap_t f;
  gheap_init(&f, 256ull << 20, 2000);
  gheap_start(&f, 4u << 20, 4u << 20);
  int stop = 0;
  worker_t w[6];
  pthread_t t[6];
  for (int i = 0; i < 6; i++) {
    w[i] = (worker_t){&f, i + 11, 0, 1, &stop, 0, 0, 0, NULL};
    pthread_create(&t[i], NULL, worker, &w[i]);
  }
  uint64_t freed = 0;
  double t0 = secs();
  while (secs() - t0 < 1.5) {
    freed += dm_grower_trim(f.g, 0, claim_cb, f.h, &terr);
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
  }
  __atomic_store_n(&stop, 1, __ATOMIC_SEQ_CST);
  uint64_t got = 0;
  for (int i = 0; i < 6; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(w[i].bad, 0);
    got += w[i].got;
  }
  dm_grower_stats_t s;
  dm_grower_stats(f.g, &s);
  printf("  %llu allocations, %llu trims unmapped %llu MiB, grew %llu times\n", (unsigned long long)got,
         (unsigned long long)s.trims, (unsigned long long)(freed >> 20), (unsigned long long)s.events);
  assert_consistent(f.h);
  assert_true(dm_heap_is_whole(f.h));
  dm_grower_trim(f.g, 0, claim_cb, f.h, &terr);
  dm_grower_stats(f.g, &s);
  assert_int_equal(s.mapped, 4u << 20);
  assert_consistent(f.h);
  gheap_fini(&f);
}

/* The service thread alone, over ops that only count: no heap. */
static uint64_t count_maps;
static int count_map(void *ctx, uint64_t off, uint64_t n) {
  (void)ctx;
  (void)off;
  (void)n;
  __atomic_add_fetch(&count_maps, 1, __ATOMIC_SEQ_CST);
  return 0;
}
static void count_unmap(void *ctx, uint64_t off, uint64_t n) {
  (void)ctx;
  (void)off;
  (void)n;
}
static const dm_grow_ops_t count_ops = {count_map, count_unmap, NULL};

static void sleep_ms(double ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)((ms - 1000.0 * (time_t)(ms / 1000)) * 1e6)};
  nanosleep(&ts, NULL);
}

/* Raise the target one step and wait until it is mapped; 0, or -1 if it is
 * not mapped within `bound` seconds (a hang guard, not a latency check). */
static int raise_and_wait(dm_grow_host_t *x, uint64_t step, double bound) {
  uint64_t want = __atomic_load_n(&x->mapped, __ATOMIC_SEQ_CST) + step;
  double t0 = secs();
  __atomic_store_n(&x->target, want, __ATOMIC_SEQ_CST);
  while (__atomic_load_n(&x->mapped, __ATOMIC_SEQ_CST) < want) {
    if (secs() - t0 > bound) return -1;
    struct timespec ts = {0, 5000};
    nanosleep(&ts, NULL);
  }
  return 0;
}

/* Polling every 50 us, an idle service thread backs off (to 1 ms): over
 * 100 ms it wakes ~100 times, not ~800-2000 (2000 less the sleeps'
 * overshoot); the bound scales with the time actually slept, so a loaded
 * machine only makes it looser. After the idle period the thread still
 * serves raised targets: one, then a chain of raises each made when the
 * previous one is mapped. How fast it serves them is the rule's business
 * (test_grow_backoff.c), not timed here. */
static void test_idle_backoff(void **st) {
  dm_grow_host_t x;
  memset(&x, 0, sizeof x);
  uint64_t step = DM_GROW_BYTES;
  dm_grow_cfg_t c = {1024 * step, step, step, 50000};
  int err;
  dm_grower_t *g = dm_grower_start(&x, &c, &count_ops, NULL, &err);
  assert_non_null(g);
  assert_int_equal(err, 0);
  dm_grower_stats_t s0, s1;
  dm_grower_stats(g, &s0);
  double t0 = secs();
  sleep_ms(100);
  dm_grower_stats(g, &s1);
  double idle = secs() - t0;
  uint64_t woke = s1.wakeups - s0.wakeups;
  printf("  idle %.0f ms: %llu wake-ups (polling every 50 us: up to %.0f)\n", idle * 1e3,
         (unsigned long long)woke, idle / 50e-6);
  assert_true(woke >= 1);                /* it does wake (and counts) */
  assert_true(woke < 4 + idle / 250e-6); /* fewer than one per 250 us on average */
  assert_int_equal(s1.events, 0);
  if (raise_and_wait(&x, step, 10.0) < 0) fail_msg("a target raised after an idle period was not mapped");
  for (int i = 0; i < 50; i++)
    if (raise_and_wait(&x, step, 10.0) < 0) fail_msg("raise %d was not mapped", i);
  dm_grower_stats(g, &s1);
  assert_int_equal(s1.events, 51);
  assert_int_equal(s1.mapped, 52 * step);
  dm_grower_stop(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_format),
      cmocka_unit_test(test_lazy_release),
      cmocka_unit_test(test_grow_under_load),
      cmocka_unit_test(test_large_block),
      cmocka_unit_test(test_ahead_at_a_quarter),
      cmocka_unit_test(test_maximum),
      cmocka_unit_test(test_at_maximum_serves_what_fits),
      cmocka_unit_test(test_device_full),
      cmocka_unit_test(test_wait_bound),
      cmocka_unit_test(test_trim_race),
      cmocka_unit_test(test_idle_backoff),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
