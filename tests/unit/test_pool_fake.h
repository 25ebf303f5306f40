/*
 * test_pool_fake.h — fake chunk sources for the pool's host tests.
 *
 * fake_src: hands out address ranges of a fake device address space (no
 * memory behind them) within a capacity, records every chunk it gave, and
 * checks that chunk_free returns exactly such a chunk. Knobs: refuse chunks
 * larger than max_chunk, misalign bases by `skew`, place chunks back to back
 * (adjacent) or with gaps.
 * host_src: the same with real host memory (for tests that write into it).
 *
 * Locking: the sources are called with the pool mutex held; host_src is
 * shared by many pools in no test, so no lock of its own. Not thread safe
 * beyond that.
 */
#ifndef TEST_POOL_FAKE_H
#define TEST_POOL_FAKE_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"

#define FAKE_MAX_CHUNKS 4096
#define FAKE_BASE 0x100000000000ull /* 16 TiB */

typedef struct fake_src {
  uint64_t capacity;  /* bytes the "device" has */
  uint64_t used;      /* bytes in chunks handed out */
  uint64_t max_chunk; /* refuse larger requests (0: no limit) */
  uint64_t skew;      /* added to every base (misaligned sources) */
  int adjacent;       /* 1: chunks back to back, 0: 1 GiB gaps */
  uint64_t next;      /* next base */
  int n;              /* chunks live */
  uint64_t base[FAKE_MAX_CHUNKS], bytes[FAKE_MAX_CHUNKS];
  int allocs, frees, refusals, bad_frees;
  void *host_mem[FAKE_MAX_CHUNKS]; /* host_src only */
  int host;                        /* 1: back chunks with host memory */
} fake_src_t;

static inline int fake_chunk_alloc(void *ctx, size_t bytes, uint64_t *base) {
  fake_src_t *f = ctx;
  if (f->n == FAKE_MAX_CHUNKS || bytes > f->capacity - f->used || (f->max_chunk && bytes > f->max_chunk)) {
    f->refusals++;
    return 1;
  }
  uint64_t b;
  void *mem = NULL;
  if (f->host) {
    mem = aligned_alloc(4096, bytes + f->skew + 4096);
    if (!mem) {
      f->refusals++;
      return 1;
    }
    b = (uint64_t)(uintptr_t)mem + f->skew;
  } else {
    if (!f->next) f->next = FAKE_BASE;
    b = f->next + f->skew;
    f->next += bytes + f->skew + (f->adjacent ? 0 : (1ull << 30));
  }
  f->base[f->n] = b;
  f->bytes[f->n] = bytes;
  f->host_mem[f->n] = mem;
  f->n++;
  f->used += bytes;
  f->allocs++;
  *base = b;
  return 0;
}

static inline void fake_chunk_free(void *ctx, uint64_t base, size_t bytes) {
  fake_src_t *f = ctx;
  for (int i = 0; i < f->n; i++) {
    if (f->base[i] == base && f->bytes[i] == bytes) {
      if (f->host) free(f->host_mem[i]);
      f->n--;
      f->base[i] = f->base[f->n];
      f->bytes[i] = f->bytes[f->n];
      f->host_mem[i] = f->host_mem[f->n];
      f->used -= bytes;
      f->frees++;
      return;
    }
  }
  f->bad_frees++;
}

static inline size_t fake_avail(void *ctx) {
  fake_src_t *f = ctx;
  return (size_t)(f->capacity - f->used);
}

static inline dm_pool_source_t fake_source(fake_src_t *f) {
  dm_pool_source_t s = {
      .ctx = f, .chunk_alloc = fake_chunk_alloc, .chunk_free = fake_chunk_free, .avail = fake_avail};
  return s;
}

/* Index of the chunk holding [addr, addr+size), or -1. */
static inline int fake_chunk_of(const fake_src_t *f, uint64_t addr, uint64_t size) {
  for (int i = 0; i < f->n; i++)
    if (addr >= f->base[i] && addr + size <= f->base[i] + f->bytes[i]) return i;
  return -1;
}

/* Report callback that only counts. */
static inline void count_report(void *ctx, const char *line) {
  (void)line;
  (*(int *)ctx)++;
}

/* xorshift64* — deterministic, seedable. */
static inline uint64_t rng_next(uint64_t *s) {
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1Dull;
}
/* Log-uniform size in 1 .. 2^max_log2. */
static inline size_t rng_size(uint64_t *s, int max_log2) {
  int k = (int)(rng_next(s) % (uint64_t)(max_log2 + 1));
  return 1 + (size_t)(rng_next(s) & ((1ull << k) - 1));
}

#endif
