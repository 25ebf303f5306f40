/*
 * test_pool_core.c — the MAM pool core (host/pool/pool.c) over fake address
 * ranges (no device memory): long random allocate/free sequences with sizes
 * 1 B .. 1 GiB checked against a reference model after every step (best-fit
 * choice, alignment, no overlap, coalescing and tiling, gauges, oracle for
 * every bad free), exhaustion and growth, auto sizing, chunk trimming,
 * double and foreign frees, unaligned and adjacent chunks, option parsing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "pool.h"
#include "pool_config.h"
#include "test_pool_fake.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define ALIGN 256u

/* ---- reference model: live allocations sorted by address -------------- */
typedef struct {
  uint64_t addr, size, req;
} live_t;
typedef struct {
  live_t *v;
  size_t n, cap;
} model_t;

static size_t model_lb(const model_t *m, uint64_t addr) {
  size_t lo = 0, hi = m->n;
  while (lo < hi) {
    size_t k = (lo + hi) / 2;
    if (m->v[k].addr < addr)
      lo = k + 1;
    else
      hi = k;
  }
  return lo;
}
static void model_add(model_t *m, live_t l) {
  if (m->n == m->cap) {
    m->cap = m->cap ? 2 * m->cap : 256;
    m->v = realloc(m->v, m->cap * sizeof *m->v);
  }
  size_t at = model_lb(m, l.addr);
  /* no overlap with neighbours */
  if (at < m->n) assert_true(l.addr + l.size <= m->v[at].addr);
  if (at > 0) assert_true(m->v[at - 1].addr + m->v[at - 1].size <= l.addr);
  memmove(&m->v[at + 1], &m->v[at], (m->n - at) * sizeof *m->v);
  m->v[at] = l;
  m->n++;
}
static void model_del(model_t *m, size_t at) {
  memmove(&m->v[at], &m->v[at + 1], (m->n - at - 1) * sizeof *m->v);
  m->n--;
}
/* Index of the live allocation containing addr, or -1. */
static long model_holding(const model_t *m, uint64_t addr) {
  size_t at = model_lb(m, addr + 1);
  if (at == 0) return -1;
  const live_t *l = &m->v[at - 1];
  return addr < l->addr + l->size ? (long)(at - 1) : -1;
}

/* ---- walking the pool ------------------------------------------------- */
typedef struct {
  uint64_t addr, size, chunk;
  int used;
} seg_t;
typedef struct {
  seg_t *v;
  size_t n, cap;
} segs_t;
static void collect(void *arg, uint64_t addr, uint64_t size, int used, uint64_t chunk) {
  segs_t *s = arg;
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 256;
    s->v = realloc(s->v, s->cap * sizeof *s->v);
  }
  s->v[s->n++] = (seg_t){addr, size, chunk, used};
}

static void check_all(dm_pool_t *p, fake_src_t *f, model_t *m, segs_t *segs) {
  const char *why = NULL;
  if (dm_pool_check(p, &why)) fail_msg("pool invariant: %s", why);
  segs->n = 0;
  dm_pool_walk(p, collect, segs);
  size_t k = 0;
  uint64_t used = 0, chunk_bytes_free = 0;
  for (size_t i = 0; i < segs->n; i++) {
    seg_t *s = &segs->v[i];
    assert_int_equal(s->addr % ALIGN, 0);
    assert_true(fake_chunk_of(f, s->addr, s->size) >= 0);
    if (i && !s->used && !segs->v[i - 1].used && segs->v[i - 1].chunk == s->chunk)
      fail_msg("free neighbours not coalesced at 0x%llx", (unsigned long long)s->addr);
    if (s->used) {
      assert_true(k < m->n);
      assert_int_equal(s->addr, m->v[k].addr);
      assert_int_equal(s->size, m->v[k].size);
      used += s->size;
      k++;
    } else {
      chunk_bytes_free += s->size;
    }
  }
  assert_int_equal(k, m->n);
  dm_pool_stats_t st;
  dm_pool_get_stats(p, &st);
  assert_int_equal(st.used_bytes, used);
  assert_int_equal(st.used_segments, m->n);
  assert_int_equal(dm_pool_free_bytes(p), chunk_bytes_free);
  assert_int_equal((int)st.chunks, f->n);
}

/* Best fit from the walk: lowest address among the smallest fitting. */
static int expect_fit(const segs_t *segs, uint64_t need, uint64_t *addr) {
  uint64_t best = UINT64_MAX;
  int found = 0;
  for (size_t i = 0; i < segs->n; i++) {
    const seg_t *s = &segs->v[i];
    if (!s->used && s->size >= need && s->size < best) {
      best = s->size;
      *addr = s->addr;
      found = 1;
    }
  }
  return found;
}

static uint64_t rup(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

/* Oracle for freeing `x`. */
static int expect_free(const model_t *m, const fake_src_t *f, uint64_t x, long *idx) {
  long h = model_holding(m, x);
  *idx = h;
  if (h >= 0) return m->v[h].addr == x ? DM_POOL_OK : DM_POOL_EINVAL;
  return fake_chunk_of(f, x, 1) >= 0 ? DM_POOL_EDOUBLE : DM_POOL_ENOTOURS;
}

static void random_run(uint64_t seed, int steps, uint64_t capacity, size_t initial, int max_log2,
                       size_t live_target, int full_every) {
  fake_src_t *f = calloc(1, sizeof *f);
  f->capacity = capacity;
  int reports = 0;
  dm_pool_config_t cfg = {.initial_bytes = initial, .report = count_report, .report_ctx = &reports};
  dm_pool_source_t src = fake_source(f);
  dm_pool_t *p;
  assert_int_equal(dm_pool_create(&cfg, &src, &p), DM_POOL_OK);
  model_t m = {0};
  segs_t segs = {0};
  uint64_t s = seed, last_freed = 0;
  int expected_reports = 0, enomem = 0, bad = 0;
  for (int step = 0; step < steps; step++) {
    int full = step % full_every == 0;
    uint64_t r = rng_next(&s) % 100;
    if (r < 4) {
      /* a bad free: a freed address, an interior pointer, or outside */
      uint64_t x;
      if (r == 0 && last_freed)
        x = last_freed;
      else if (r == 1 && m.n) {
        live_t *l = &m.v[rng_next(&s) % m.n];
        x = l->addr + 1 + rng_next(&s) % l->size;
        if (x >= l->addr + l->size) x = l->addr + l->size - 1;
      } else if (r == 2)
        x = FAKE_BASE - 4096 - rng_next(&s) % 4096;
      else
        x = FAKE_BASE + rng_next(&s) % (capacity * 2);
      long h;
      int want = expect_free(&m, f, x, &h);
      int got = dm_pool_free(p, x, NULL);
      assert_int_equal(got, want);
      if (want == DM_POOL_OK) model_del(&m, (size_t)h);
      if (want == DM_POOL_EINVAL || want == DM_POOL_EDOUBLE) {
        expected_reports++;
        bad++;
      }
    } else if (r < 6) {
      dm_pool_trim(p);
    } else if (m.n && (m.n > live_target || r < 50)) {
      size_t at = rng_next(&s) % m.n;
      live_t l = m.v[at];
      size_t req = 0;
      assert_int_equal(dm_pool_free(p, l.addr, &req), DM_POOL_OK);
      assert_int_equal(req, l.req);
      model_del(&m, at);
      last_freed = l.addr;
    } else {
      size_t req = rng_size(&s, max_log2);
      uint64_t need = rup(req, ALIGN), want_addr = 0;
      int fit = 0;
      if (full) {
        segs.n = 0;
        dm_pool_walk(p, collect, &segs);
        fit = expect_fit(&segs, need, &want_addr);
      }
      uint64_t a = 0;
      int rc = dm_pool_alloc(p, req, &a);
      if (rc == DM_POOL_OK) {
        assert_int_equal(a % ALIGN, 0);
        if (fit) assert_int_equal(a, want_addr); /* best fit */
        assert_true(fake_chunk_of(f, a, need) >= 0);
        model_add(&m, (live_t){a, need, req});
      } else {
        assert_int_equal(rc, DM_POOL_ENOMEM);
        enomem++;
        /* really nothing fits: no free segment, no fully free chunk,
         * and the source could not give a chunk of the request's size */
        assert_true(f->capacity - f->used < rup(need, 2 * MiB));
        segs_t t = {0};
        dm_pool_walk(p, collect, &t);
        uint64_t dummy;
        assert_false(expect_fit(&t, need, &dummy));
        for (size_t i = 0; i < t.n; i++) {
          int alone = (i == 0 || t.v[i - 1].chunk != t.v[i].chunk) &&
                      (i + 1 == t.n || t.v[i + 1].chunk != t.v[i].chunk);
          assert_false(alone && !t.v[i].used);
        }
        free(t.v);
      }
    }
    if (full || step == steps - 1) check_all(p, f, &m, &segs);
  }
  assert_int_equal(reports, expected_reports);
  dm_pool_stats_t st;
  dm_pool_get_stats(p, &st);
  assert_int_equal(st.double_frees + st.invalid_frees, (uint64_t)bad);
  assert_int_equal(st.failed_allocs, (uint64_t)enomem);
  printf("  seed %llu: %d steps, %llu allocs, %llu frees, %d ENOMEM, %d bad frees, "
         "%llu chunks obtained, %llu released, peak %llu MiB\n",
         (unsigned long long)seed, steps, (unsigned long long)st.allocs, (unsigned long long)st.frees, enomem,
         bad, (unsigned long long)st.chunks_obtained, (unsigned long long)st.chunks_released,
         (unsigned long long)(st.peak_used_bytes >> 20));
  /* free everything: one free segment per chunk, then destroy gives all back */
  while (m.n) {
    assert_int_equal(dm_pool_free(p, m.v[m.n - 1].addr, NULL), 0);
    m.n--;
  }
  check_all(p, f, &m, &segs);
  dm_pool_get_stats(p, &st);
  assert_int_equal(st.free_segments, st.chunks);
  dm_pool_destroy(p);
  assert_int_equal(f->n, 0);
  assert_int_equal(f->used, 0);
  assert_int_equal(f->bad_frees, 0);
  free(m.v);
  free(segs.v);
  free(f);
}

/* Sizes 1 B .. 1 GiB, full model check after every step. */
static void test_random_1g_full(void **st) {
  (void)st;
  random_run(1, 30000, 64 * GiB, 4 * GiB, 30, 200, 1);
}
/* Tight device: exhaustion, growth and trimming all the time. */
static void test_random_tight(void **st) {
  (void)st;
  random_run(2, 30000, 6 * GiB, 1 * GiB, 30, 100, 1);
}
/* Many small live segments (up to 1 MiB), long run, checked every 50 steps. */
static void test_random_many(void **st) {
  (void)st;
  random_run(3, 300000, 16 * GiB, 256 * MiB, 20, 20000, 50);
}
/* Auto mode under random load. */
static void test_random_auto(void **st) {
  (void)st;
  random_run(4, 20000, 24 * GiB, 0, 30, 150, 1);
}

static void test_exhaustion_and_growth(void **st) {
  (void)st;
  fake_src_t *f = calloc(1, sizeof *f);
  f->capacity = 64 * MiB;
  dm_pool_config_t cfg = {.initial_bytes = 16 * MiB};
  dm_pool_source_t src = fake_source(f);
  dm_pool_t *p;
  assert_int_equal(dm_pool_create(&cfg, &src, &p), 0);
  assert_int_equal(f->allocs, 0); /* lazy */
  uint64_t a[100];
  int n = 0;
  while (n < 100 && dm_pool_alloc(p, MiB, &a[n]) == DM_POOL_OK) n++;
  assert_int_equal(n, 64);        /* every byte of the device is usable */
  assert_int_equal(f->allocs, 4); /* 16 MiB first chunk, grown by 16 MiB chunks */
  dm_pool_stats_t s;
  dm_pool_get_stats(p, &s);
  assert_int_equal(s.failed_allocs, 1);
  assert_int_equal(s.chunk_bytes, 64 * MiB);
  assert_int_equal(dm_pool_free_bytes(p), 0);
  /* free one chunk's worth in the middle: a 16 MiB request fits again */
  for (int i = 0; i < 64; i++) {
    int c = fake_chunk_of(f, a[i], MiB);
    if (f->base[c] == f->base[1]) {
      assert_int_equal(dm_pool_free(p, a[i], NULL), 0);
      a[i] = 0;
    }
  }
  uint64_t big;
  assert_int_equal(dm_pool_alloc(p, 16 * MiB, &big), 0);
  assert_int_equal(big, f->base[1]);
  assert_int_equal(dm_pool_free(p, big, NULL), 0);
  /* a 40 MiB request cannot fit in 16 MiB chunks: with everything free the
   * pool trims its chunks and grows by one of the request's size */
  for (int i = 0; i < 64; i++)
    if (a[i]) assert_int_equal(dm_pool_free(p, a[i], NULL), 0);
  assert_int_equal(dm_pool_alloc(p, 40 * MiB, &big), 0);
  dm_pool_get_stats(p, &s);
  assert_true(s.chunks_released >= 3);
  assert_int_equal(dm_pool_check(p, NULL), 0);
  assert_int_equal(dm_pool_free(p, big, NULL), 0);
  assert_int_equal(dm_pool_trim(p), 40 * MiB + (s.chunks - 1) * 16 * MiB);
  assert_int_equal(f->used, 0);
  dm_pool_destroy(p);
  assert_int_equal(f->bad_frees, 0);
  free(f);
}

static void test_auto_sizing(void **st) {
  (void)st;
  fake_src_t *f = calloc(1, sizeof *f);
  f->capacity = 80 * GiB;
  f->max_chunk = 30 * GiB + 5 * MiB; /* the device can't give more in one piece */
  dm_pool_config_t cfg = {0};
  dm_pool_source_t src = fake_source(f);
  dm_pool_t *p;
  assert_int_equal(dm_pool_create(&cfg, &src, &p), 0);
  uint64_t a;
  assert_int_equal(dm_pool_alloc(p, 1, &a), 0);
  assert_int_equal(f->n, 1);
  /* decreasing 1/8 steps from 80 GiB - 2.5 GiB reserve: the first that fits */
  assert_true(f->bytes[0] <= f->max_chunk);
  assert_true(f->bytes[0] >= f->max_chunk / 8 * 7 - 2 * MiB);
  assert_int_equal(f->bytes[0] % (2 * MiB), 0);
  assert_true(f->refusals > 0);
  assert_int_equal(a, f->base[0]);
  dm_pool_destroy(p);

  /* small device: reserve is at most half of what is available */
  memset(f, 0, sizeof *f);
  f->capacity = 300 * MiB;
  assert_int_equal(dm_pool_create(&cfg, &src, &p), 0);
  assert_int_equal(dm_pool_alloc(p, 1, &a), 0);
  assert_int_equal(f->bytes[0], 150 * MiB);
  dm_pool_destroy(p);

  /* request larger than what auto leaves: grown exactly for it */
  memset(f, 0, sizeof *f);
  f->capacity = 300 * MiB;
  assert_int_equal(dm_pool_create(&cfg, &src, &p), 0);
  assert_int_equal(dm_pool_alloc(p, 200 * MiB, &a), 0);
  assert_int_equal(f->n, 1);
  assert_int_equal(f->bytes[0], 200 * MiB);
  dm_pool_destroy(p);
  free(f);
}

static void test_source_refuses(void **st) {
  (void)st;
  fake_src_t *f = calloc(1, sizeof *f); /* capacity 0: refuses everything */
  int reports = 0;
  dm_pool_config_t cfg = {.initial_bytes = 4 * MiB, .report = count_report, .report_ctx = &reports};
  dm_pool_source_t src = fake_source(f);
  dm_pool_t *p;
  assert_int_equal(dm_pool_create(&cfg, &src, &p), 0);
  uint64_t a = 77;
  assert_int_equal(dm_pool_alloc(p, 1000, &a), DM_POOL_ENOMEM);
  assert_int_equal(a, 77);
  assert_int_equal(dm_pool_alloc(p, 0, &a), DM_POOL_EINVAL);
  assert_int_equal(dm_pool_alloc(p, SIZE_MAX, &a), DM_POOL_ENOMEM);
  assert_int_equal(dm_pool_free(p, 0x1000, NULL), DM_POOL_ENOTOURS);
  assert_int_equal(dm_pool_check(p, NULL), 0);
  assert_int_equal(reports, 0);
  /* the device frees up: the next allocation grows the pool */
  f->capacity = 8 * MiB;
  assert_int_equal(dm_pool_alloc(p, 1000, &a), 0);
  dm_pool_destroy(p);
  free(f);
}

/* Sizes the granule rounding would wrap are refused at creation; a first
 * chunk larger than the device is grown down to what the device gives. */
static void test_huge_sizes(void **st) {
  (void)st;
  fake_src_t *f = calloc(1, sizeof *f);
  f->capacity = 80 * GiB;
  dm_pool_source_t src = fake_source(f);
  dm_pool_t *p = NULL;
  dm_pool_config_t cfg = {.initial_bytes = SIZE_MAX};
  assert_int_equal(dm_pool_create(&cfg, &src, &p), DM_POOL_EINVAL);
  cfg.initial_bytes = SIZE_MAX - 4095;
  assert_int_equal(dm_pool_create(&cfg, &src, &p), DM_POOL_EINVAL);
  cfg = (dm_pool_config_t){.grow_bytes = SIZE_MAX};
  assert_int_equal(dm_pool_create(&cfg, &src, &p), DM_POOL_EINVAL);
  cfg = (dm_pool_config_t){.initial_bytes = 100 * GiB};
  assert_int_equal(dm_pool_create(&cfg, &src, &p), 0);
  uint64_t a;
  assert_int_equal(dm_pool_alloc(p, 1 * MiB, &a), 0);
  assert_true(f->n >= 1 && f->bytes[0] <= 80 * GiB && f->bytes[0] >= 2 * MiB);
  dm_pool_destroy(p);
  free(f);
}

static void test_double_and_foreign(void **st) {
  (void)st;
  fake_src_t *f = calloc(1, sizeof *f);
  f->capacity = GiB;
  int reports = 0;
  dm_pool_config_t cfg = {.initial_bytes = 16 * MiB, .report = count_report, .report_ctx = &reports};
  dm_pool_source_t src = fake_source(f);
  dm_pool_t *p;
  assert_int_equal(dm_pool_create(&cfg, &src, &p), 0);
  uint64_t a, b, c;
  assert_int_equal(dm_pool_alloc(p, 1000, &a), 0);
  assert_int_equal(dm_pool_alloc(p, 3000, &b), 0);
  assert_int_equal(dm_pool_alloc(p, 5000, &c), 0);
  assert_int_equal(b, a + 1024);
  assert_int_equal(c, b + 3072);
  assert_int_equal(dm_pool_free(p, b, NULL), 0);
  assert_int_equal(dm_pool_free(p, b, NULL), DM_POOL_EDOUBLE);
  assert_int_equal(dm_pool_free(p, a, NULL), 0);               /* merges with b's segment */
  assert_int_equal(dm_pool_free(p, b, NULL), DM_POOL_EDOUBLE); /* now inside a merged free segment */
  assert_int_equal(dm_pool_free(p, a, NULL), DM_POOL_EDOUBLE);
  assert_int_equal(dm_pool_free(p, c + 256, NULL), DM_POOL_EINVAL); /* interior */
  assert_int_equal(dm_pool_free(p, c + 1, NULL), DM_POOL_EINVAL);
  assert_int_equal(dm_pool_free(p, a - 256, NULL), DM_POOL_ENOTOURS);      /* before the chunk */
  assert_int_equal(dm_pool_free(p, a + 16 * MiB, NULL), DM_POOL_ENOTOURS); /* after */
  assert_int_equal(dm_pool_free(p, 0, NULL), DM_POOL_ENOTOURS);
  assert_int_equal(reports, 5);
  dm_pool_stats_t s;
  dm_pool_get_stats(p, &s);
  assert_int_equal(s.double_frees, 3);
  assert_int_equal(s.invalid_frees, 2);
  assert_int_equal(s.used_segments, 1);
  assert_int_equal(s.free_segments, 2);
  assert_int_equal(dm_pool_check(p, NULL), 0);
  /* nothing corrupted: c is still live and freeable, then all is one segment */
  assert_int_equal(dm_pool_free(p, c, NULL), 0);
  dm_pool_get_stats(p, &s);
  assert_int_equal(s.free_segments, 1);
  assert_int_equal(s.largest_free, 16 * MiB);
  assert_true(dm_pool_contains(p, a));
  assert_false(dm_pool_contains(p, a + 16 * MiB));
  dm_pool_destroy(p);
  free(f);
}

static void test_alignment_and_skew(void **st) {
  (void)st;
  fake_src_t *f = calloc(1, sizeof *f);
  f->capacity = 4 * GiB;
  f->skew = 128; /* chunks start 128 B off any 256 B boundary */
  dm_pool_config_t cfg = {.initial_bytes = 8 * MiB, .alignment = 4096};
  dm_pool_source_t src = fake_source(f);
  dm_pool_t *p;
  assert_int_equal(dm_pool_create(&cfg, &src, &p), 0);
  assert_int_equal(dm_pool_alignment(p), 4096);
  uint64_t s = 9, a[500];
  for (int i = 0; i < 500; i++) {
    assert_int_equal(dm_pool_alloc(p, rng_size(&s, 16), &a[i]), 0);
    assert_int_equal(a[i] % 4096, 0);
  }
  assert_int_equal(dm_pool_check(p, NULL), 0);
  for (int i = 0; i < 500; i += 2) assert_int_equal(dm_pool_free(p, a[i], NULL), 0);
  assert_int_equal(dm_pool_check(p, NULL), 0);
  dm_pool_destroy(p);
  assert_int_equal(f->bad_frees, 0);
  assert_int_equal(f->n, 0);
  /* bad configurations */
  dm_pool_config_t bad1 = {.alignment = 128}, bad2 = {.alignment = 768}, bad3 = {.granule = 1000};
  assert_int_equal(dm_pool_create(&bad1, &src, &p), DM_POOL_EINVAL);
  assert_int_equal(dm_pool_create(&bad2, &src, &p), DM_POOL_EINVAL);
  assert_int_equal(dm_pool_create(&bad3, &src, &p), DM_POOL_EINVAL);
  dm_pool_source_t nosrc = {0};
  assert_int_equal(dm_pool_create(&cfg, &nosrc, &p), DM_POOL_EINVAL);
  free(f);
}

/* Chunks that happen to be adjacent in the address space never merge. */
static void test_adjacent_chunks_do_not_merge(void **st) {
  (void)st;
  fake_src_t *f = calloc(1, sizeof *f);
  f->capacity = GiB;
  f->adjacent = 1;
  dm_pool_config_t cfg = {.initial_bytes = 2 * MiB};
  dm_pool_source_t src = fake_source(f);
  dm_pool_t *p;
  assert_int_equal(dm_pool_create(&cfg, &src, &p), 0);
  uint64_t a, b;
  assert_int_equal(dm_pool_alloc(p, 2 * MiB, &a), 0);
  assert_int_equal(dm_pool_alloc(p, 2 * MiB, &b), 0);
  assert_int_equal(b, a + 2 * MiB); /* back to back */
  assert_int_equal(dm_pool_free(p, a, NULL), 0);
  assert_int_equal(dm_pool_free(p, b, NULL), 0);
  dm_pool_stats_t s;
  dm_pool_get_stats(p, &s);
  assert_int_equal(s.free_segments, 2);
  assert_int_equal(s.largest_free, 2 * MiB);
  assert_int_equal(dm_pool_check(p, NULL), 0);
  /* a 4 MiB request needs a new chunk (after trimming the two) */
  assert_int_equal(dm_pool_alloc(p, 4 * MiB, &a), 0);
  assert_int_equal(dm_pool_check(p, NULL), 0);
  dm_pool_destroy(p);
  assert_int_equal(f->bad_frees, 0);
  free(f);
}

static void test_parse_option(void **st) {
  (void)st;
  struct {
    const char *s;
    int rc;
    dm_pool_mode_t mode;
    size_t bytes;
  } cases[] = {
      {NULL, 0, DM_POOL_MODE_OFF, 0},
      {"", 0, DM_POOL_MODE_OFF, 0},
      {"off", 0, DM_POOL_MODE_OFF, 0},
      {" OFF ", 0, DM_POOL_MODE_OFF, 0},
      {"0", 0, DM_POOL_MODE_OFF, 0},
      {"no", 0, DM_POOL_MODE_OFF, 0},
      {"auto", 0, DM_POOL_MODE_AUTO, 0},
      {"Auto", 0, DM_POOL_MODE_AUTO, 0},
      {"on", 0, DM_POOL_MODE_AUTO, 0},
      {"1G", 0, DM_POOL_MODE_BYTES, 1ull << 30},
      {"1g", 0, DM_POOL_MODE_BYTES, 1ull << 30},
      {"512MiB", 0, DM_POOL_MODE_BYTES, 512ull << 20},
      {"64MB", 0, DM_POOL_MODE_BYTES, 64ull << 20},
      {"1073741824", 0, DM_POOL_MODE_BYTES, 1ull << 30},
      {"4096B", 0, DM_POOL_MODE_BYTES, 4096},
      {"2T", 0, DM_POOL_MODE_BYTES, 2ull << 40},
      {"12k", 0, DM_POOL_MODE_BYTES, 12ull << 10},
      {"1X", DM_POOL_EINVAL, 0, 0},
      {"G", DM_POOL_EINVAL, 0, 0},
      {"-1", DM_POOL_EINVAL, 0, 0},
      {"1GiBx", DM_POOL_EINVAL, 0, 0},
      {"1.5G", 0, DM_POOL_MODE_BYTES, 3ull << 29},
      {"18446744073709551615", DM_POOL_EINVAL, 0, 0},
      {"99999999999999999999", DM_POOL_EINVAL, 0, 0},
      {"100000000T", DM_POOL_EINVAL, 0, 0},
      {"autox", DM_POOL_EINVAL, 0, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    dm_pool_mode_t mode = 99;
    size_t bytes = 0;
    int rc = dm_pool_parse_option(cases[i].s, &mode, &bytes);
    if (rc != cases[i].rc) fail_msg("\"%s\": rc %d", cases[i].s ? cases[i].s : "(null)", rc);
    if (rc == 0) {
      assert_int_equal(mode, cases[i].mode);
      if (mode == DM_POOL_MODE_BYTES) assert_int_equal(bytes, cases[i].bytes);
    } else {
      assert_int_equal(mode, 99);
    }
  }
}

static void test_stats_print(void **st) {
  (void)st;
  fake_src_t *f = calloc(1, sizeof *f);
  f->capacity = GiB;
  dm_pool_config_t cfg = {.initial_bytes = 4 * MiB};
  dm_pool_source_t src = fake_source(f);
  dm_pool_t *p;
  assert_int_equal(dm_pool_create(&cfg, &src, &p), 0);
  uint64_t a;
  assert_int_equal(dm_pool_alloc(p, 100, &a), 0);
  dm_pool_stats_t s;
  dm_pool_get_stats(p, &s);
  char buf[4096] = {0};
  FILE *mf = fmemopen(buf, sizeof buf - 1, "w");
  dm_pool_stats_print(&s, mf, "test pool");
  fclose(mf);
  assert_non_null(strstr(buf, "test pool:"));
  assert_non_null(strstr(buf, "allocs"));
  assert_non_null(strstr(buf, "requested_bytes"));
  assert_int_equal(s.requested_bytes, 100);
  assert_int_equal(s.used_bytes, 256);
  assert_string_equal(dm_pool_strerror(DM_POOL_EDOUBLE), "double free");
  dm_pool_destroy(p);
  free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_option),       cmocka_unit_test(test_double_and_foreign),
      cmocka_unit_test(test_huge_sizes),         cmocka_unit_test(test_exhaustion_and_growth),
      cmocka_unit_test(test_auto_sizing),        cmocka_unit_test(test_source_refuses),
      cmocka_unit_test(test_alignment_and_skew), cmocka_unit_test(test_adjacent_chunks_do_not_merge),
      cmocka_unit_test(test_stats_print),        cmocka_unit_test(test_random_1g_full),
      cmocka_unit_test(test_random_tight),       cmocka_unit_test(test_random_auto),
      cmocka_unit_test(test_random_many),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
