/*
 * sha256.c — SHA-256. See sha256.h.
 *
 * The block function hashes whole 64-byte blocks into the state, many per
 * call: whole blocks of the input are hashed in place, only a partial block
 * is copied into the context. On x86-64 the SHA-NI block function is compiled
 * for its instruction set alone (a target attribute; no global flags) and
 * chosen by CPUID on first use, else the portable one.
 *
 * Locking: none for contexts (the caller's). The chosen block function is a
 * static pointer set by atomic store on first use; threads racing there all
 * compute and store the same choice.
 */
#include "sha256.h"
#include <stdatomic.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

typedef void blocks_fn(uint32_t h[8], const uint8_t *p, size_t nblocks);

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void blocks_portable(uint32_t hs[8], const uint8_t *p, size_t nblocks) {
  for (; nblocks; nblocks--, p += 64) {
    uint32_t w[64], a, b, c, d, e, f, g, h;
    for (int i = 0; i < 16; i++)
      w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
             p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
      uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    a = hs[0];
    b = hs[1];
    c = hs[2];
    d = hs[3];
    e = hs[4];
    f = hs[5];
    g = hs[6];
    h = hs[7];
    for (int i = 0; i < 64; i++) {
      uint32_t t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
      uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    hs[0] += a;
    hs[1] += b;
    hs[2] += c;
    hs[3] += d;
    hs[4] += e;
    hs[5] += f;
    hs[6] += g;
    hs[7] += h;
  }
}

#if defined(__x86_64__)
/*
 * SHA-NI. The state lives in two registers as SHA256RNDS2 wants it: abef
 * holds A,B,E,F and cdgh holds C,D,G,H, first-named word in the highest lane.
 * Message words sit four to a register, the earliest in the lowest lane.
 */
#define SHANI __attribute__((target("sha,ssse3")))

/* Rounds 4i .. 4i+3 on the message words w: two SHA256RNDS2, two rounds
 * each. The first leaves the new A,B,E,F in cdgh (the old A,B,E,F are the new
 * C,D,G,H); the second puts things back in their registers. */
#define SHANI_ROUNDS4(w, i)                                                          \
  do {                                                                               \
    __m128i wk_ = _mm_add_epi32((w), _mm_loadu_si128((const __m128i *)&K[4 * (i)])); \
    cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk_);                                   \
    abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(wk_, 0x0E));          \
  } while (0)

/* w0 = W[t-16..t-13], w1 = W[t-12..], w2 = W[t-8..], w3 = W[t-4..t-1]:
 * w0 becomes W[t..t+3]. alignr gives W[t-7..t-4]. */
#define SHANI_SCHEDULE(w0, w1, w2, w3) \
  ((w0) = _mm_sha256msg2_epu32(        \
       _mm_add_epi32(_mm_sha256msg1_epu32((w0), (w1)), _mm_alignr_epi8((w3), (w2), 4)), (w3)))

SHANI static void blocks_shani(uint32_t h[8], const uint8_t *p, size_t nblocks) {
  /* Byte order: big-endian words, reversed within each 32-bit lane. */
  const __m128i bswap = _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
  __m128i dcba = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[0]), 0x1B);
  __m128i hgfe = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[4]), 0x1B);
  __m128i abef = _mm_unpackhi_epi64(hgfe, dcba);
  __m128i cdgh = _mm_unpacklo_epi64(hgfe, dcba);

  for (; nblocks; nblocks--, p += 64) {
    const __m128i abef0 = abef, cdgh0 = cdgh;
    __m128i w0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)p), bswap);
    __m128i w1 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16)), bswap);
    __m128i w2 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 32)), bswap);
    __m128i w3 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 48)), bswap);
    SHANI_ROUNDS4(w0, 0);
    SHANI_ROUNDS4(w1, 1);
    SHANI_ROUNDS4(w2, 2);
    SHANI_ROUNDS4(w3, 3);
    for (int i = 4; i < 16; i += 4) {
      SHANI_SCHEDULE(w0, w1, w2, w3);
      SHANI_ROUNDS4(w0, i);
      SHANI_SCHEDULE(w1, w2, w3, w0);
      SHANI_ROUNDS4(w1, i + 1);
      SHANI_SCHEDULE(w2, w3, w0, w1);
      SHANI_ROUNDS4(w2, i + 2);
      SHANI_SCHEDULE(w3, w0, w1, w2);
      SHANI_ROUNDS4(w3, i + 3);
    }
    abef = _mm_add_epi32(abef, abef0);
    cdgh = _mm_add_epi32(cdgh, cdgh0);
  }

  dcba = _mm_unpackhi_epi64(cdgh, abef);
  hgfe = _mm_unpacklo_epi64(cdgh, abef);
  _mm_storeu_si128((__m128i *)&h[0], _mm_shuffle_epi32(dcba, 0x1B));
  _mm_storeu_si128((__m128i *)&h[4], _mm_shuffle_epi32(hgfe, 0x1B));
}

static int cpu_has_shani(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSSE3)) return 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
  return (b & (1u << 29)) != 0; /* SHA */
}
#endif

static _Atomic(blocks_fn *) chosen;

static blocks_fn *blocks_choose(void) {
  blocks_fn *fn = atomic_load_explicit(&chosen, memory_order_relaxed);
  if (fn) return fn;
  fn = blocks_portable;
#if defined(__x86_64__)
  if (cpu_has_shani()) fn = blocks_shani;
#endif
  atomic_store_explicit(&chosen, fn, memory_order_relaxed);
  return fn;
}

void dm_sha256_init(dm_sha256_t *c) {
  static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(c->h, iv, sizeof iv);
  c->len = 0;
  c->fill = 0;
}

static void update_with(dm_sha256_t *c, const uint8_t *p, size_t n, blocks_fn *fn) {
  if (n == 0) return;
  c->len += n;
  if (c->fill) {
    size_t k = 64 - c->fill < n ? 64 - c->fill : n;
    memcpy(c->buf + c->fill, p, k);
    c->fill += k;
    p += k;
    n -= k;
    if (c->fill < 64) return;
    fn(c->h, c->buf, 1);
    c->fill = 0;
  }
  if (n >= 64) {
    fn(c->h, p, n / 64);
    p += n - n % 64;
    n %= 64;
  }
  if (n) {
    memcpy(c->buf, p, n);
    c->fill = n;
  }
}

static void final_with(dm_sha256_t *c, uint8_t out[32], blocks_fn *fn) {
  uint64_t bits = c->len * 8;
  size_t fill = c->fill;
  c->buf[fill++] = 0x80;
  if (fill > 56) {
    memset(c->buf + fill, 0, 64 - fill);
    fn(c->h, c->buf, 1);
    fill = 0;
  }
  memset(c->buf + fill, 0, 56 - fill);
  for (int i = 0; i < 8; i++) c->buf[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
  fn(c->h, c->buf, 1);
  c->fill = 0;
  for (int i = 0; i < 8; i++) {
    out[4 * i] = (uint8_t)(c->h[i] >> 24);
    out[4 * i + 1] = (uint8_t)(c->h[i] >> 16);
    out[4 * i + 2] = (uint8_t)(c->h[i] >> 8);
    out[4 * i + 3] = (uint8_t)c->h[i];
  }
}

void dm_sha256_update(dm_sha256_t *c, const void *data, size_t n) {
  update_with(c, data, n, blocks_choose());
}

void dm_sha256_final(dm_sha256_t *c, uint8_t out[32]) { final_with(c, out, blocks_choose()); }

void dm_sha256(const void *data, size_t n, uint8_t out[32]) {
  blocks_fn *fn = blocks_choose();
  dm_sha256_t c;
  dm_sha256_init(&c);
  update_with(&c, data, n, fn);
  final_with(&c, out, fn);
}

#ifdef DM_TESTING
int dm_sha256_accelerated(void) { return blocks_choose() != blocks_portable; }

void dm_sha256_portable(const void *data, size_t n, uint8_t out[32]) {
  dm_sha256_t c;
  dm_sha256_init(&c);
  update_with(&c, data, n, blocks_portable);
  final_with(&c, out, blocks_portable);
}
#endif
