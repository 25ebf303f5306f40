/*
 * test_fatbin.c — the fatbin reader and decompression on images nvcc built
 * (mk/interpose_image_relink.mk: compressed with zstd and LZ4, uncompressed, several archs,
 * PTX-only, ELF-only) and on truncated and corrupted copies of them: clean
 * errors, no crash, no read out of bounds (this test is also built with
 * -fsanitize=address,undefined).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "cubin_elf.h"
#include "decompress.h"
#include "fatbin.h"
#include "ptx_scan.h"
#include "relink_test_util.h"

typedef struct {
  const char *file;
  unsigned nptx, nelf;
  int ptx_codec, elf_codec;      /* -2: don't care */
  unsigned archs_ptx, archs_elf; /* bitmask of arch/10 - 7 positions */
} fx_expect_t;

static const fx_expect_t fixtures[] = {
    {"malloc_default.fatbin", 1, 1, DM_CODEC_ZSTD, DM_CODEC_NONE, 0, 0},
    {"malloc_nocomp.fatbin", 1, 1, DM_CODEC_NONE, DM_CODEC_NONE, 0, 0},
    {"malloc_zstd_all.fatbin", 1, 1, DM_CODEC_ZSTD, DM_CODEC_ZSTD, 0, 0},
    {"malloc_lz4_all.fatbin", 1, 1, DM_CODEC_LZ4, DM_CODEC_LZ4, 0, 0},
    {"malloc_multi.fatbin", 2, 3, -2, -2, 0, 0},
    {"malloc_ptx.fatbin", 1, 0, DM_CODEC_ZSTD, -2, 0, 0},
    {"malloc_elf.fatbin", 0, 1, -2, DM_CODEC_NONE, 0, 0},
    {"plain_default.fatbin", 1, 1, DM_CODEC_ZSTD, DM_CODEC_NONE, 0, 0},
};
#define NFX (sizeof fixtures / sizeof fixtures[0])

/* Full pipeline over one buffer: open, iterate, load, inspect. Returns the
 * number of entries loaded; never fails the test itself (corrupt input is
 * allowed to be rejected at any step). */
static int walk(const unsigned char *buf, size_t len) {
  dm_fatbin_t fb;
  char why[200];
  if (dm_fatbin_open(buf, len, &fb, why, sizeof why) < 0) return -1;
  assert_true(fb.size <= len);
  size_t cur = 0;
  dm_fb_entry_t e;
  int n = 0, rc, guard = 0;
  while ((rc = dm_fatbin_next(&fb, &cur, &e, why, sizeof why)) == 1) {
    assert_true(e.payload >= fb.data && e.payload + e.payload_size <= fb.data + fb.size);
    assert_true(++guard < 100000);
    unsigned char *img;
    size_t sz;
    if (dm_fb_entry_load(&e, &img, &sz, why, sizeof why) == 0) {
      n++;
      if (e.kind == DM_FB_KIND_ELF) {
        dm_cubin_info_t ci;
        dm_cubin_inspect(img, sz, &ci, why, sizeof why);
      } else {
        dm_ptx_info_t pi;
        dm_ptx_scan((const char *)img, sz, &pi);
      }
      free(img);
    }
  }
  assert_true(rc == 0 || rc < 0);
  return n;
}

static void test_fixtures_parse(void **state) {
  (void)state;
  for (size_t i = 0; i < NFX; i++) {
    size_t len;
    unsigned char *buf = fx_read(fixtures[i].file, &len);
    assert_int_equal(dm_image_kind(buf, len), DM_IMG_FATBIN);
    dm_fatbin_t fb;
    char why[200] = "";
    assert_int_equal(dm_fatbin_open(buf, len, &fb, why, sizeof why), 0);
    assert_int_equal(fb.size, len);
    size_t cur = 0;
    dm_fb_entry_t e;
    unsigned nptx = 0, nelf = 0;
    int rc;
    while ((rc = dm_fatbin_next(&fb, &cur, &e, why, sizeof why)) == 1) {
      unsigned char *img;
      size_t sz;
      assert_int_equal(dm_fb_entry_load(&e, &img, &sz, why, sizeof why), 0);
      assert_int_equal(img[sz], 0);
      if (e.kind == DM_FB_KIND_ELF) {
        nelf++;
        if (fixtures[i].elf_codec != -2) assert_int_equal(e.codec, fixtures[i].elf_codec);
        if (e.codec) assert_int_equal(sz, e.uncompressed_size);
        dm_cubin_info_t ci;
        assert_int_equal(dm_cubin_inspect(img, sz, &ci, why, sizeof why), 0);
        assert_int_equal(ci.machine, DM_EM_CUDA);
        assert_int_equal(ci.sm, e.arch);
      } else {
        assert_int_equal(e.kind, DM_FB_KIND_PTX);
        nptx++;
        if (fixtures[i].ptx_codec != -2) assert_int_equal(e.codec, fixtures[i].ptx_codec);
        assert_non_null(strstr((char *)img, ".version"));
        dm_ptx_info_t pi;
        assert_int_equal(dm_ptx_scan((char *)img, sz, &pi), 0);
        assert_int_equal(pi.target_sm, e.arch);
      }
      free(img);
    }
    assert_int_equal(rc, 0);
    if (nptx != fixtures[i].nptx || nelf != fixtures[i].nelf)
      fail_msg("%s: %u PTX %u ELF", fixtures[i].file, nptx, nelf);
    free(buf);
  }
}

/* The PTX text is the same however it was compressed. */
static char *first_ptx(const char *file, size_t *n) {
  size_t len;
  unsigned char *buf = fx_read(file, &len);
  dm_fatbin_t fb;
  assert_int_equal(dm_fatbin_open(buf, len, &fb, NULL, 0), 0);
  size_t cur = 0;
  dm_fb_entry_t e;
  while (dm_fatbin_next(&fb, &cur, &e, NULL, 0) == 1) {
    if (e.kind != DM_FB_KIND_PTX) continue;
    unsigned char *img;
    assert_int_equal(dm_fb_entry_load(&e, &img, n, NULL, 0), 0);
    free(buf);
    return (char *)img;
  }
  fail_msg("%s has no PTX", file);
  return NULL;
}

static void test_codecs_agree(void **state) {
  (void)state;
  size_t a, b, c;
  char *p0 = first_ptx("malloc_nocomp.fatbin", &a);
  char *p1 = first_ptx("malloc_default.fatbin", &b);
  char *p2 = first_ptx("malloc_lz4_all.fatbin", &c);
  assert_int_equal(a, b);
  assert_int_equal(a, c);
  assert_memory_equal(p0, p1, a);
  assert_memory_equal(p0, p2, a);
  dm_ptx_info_t pi;
  dm_ptx_scan(p0, a, &pi);
  assert_true(pi.extern_malloc && pi.extern_free && pi.extern_aligned);
  assert_false(pi.defines_malloc);
  free(p0);
  free(p1);
  free(p2);
}

struct wrapper {
  uint32_t magic, version;
  const void *fatbin;
  const void *unused;
};

static void test_wrapper(void **state) {
  (void)state;
  size_t len;
  unsigned char *buf = fx_read("malloc_default.fatbin", &len);
  struct wrapper w = {DM_FATBIN_WRAPPER_MAGIC, 1, buf, NULL};
  assert_int_equal(dm_image_kind(&w, sizeof w), DM_IMG_WRAPPER);
  dm_fatbin_t fb;
  assert_int_equal(dm_fatbin_from_wrapper(&w, &fb, NULL, 0), 0);
  assert_ptr_equal(fb.data, buf);
  assert_int_equal(fb.size, len);
  w.version = 7;
  assert_int_equal(dm_fatbin_from_wrapper(&w, &fb, NULL, 0), -ENOTSUP);
  w.version = 2;
  w.fatbin = NULL;
  assert_int_equal(dm_fatbin_from_wrapper(&w, &fb, NULL, 0), -EINVAL);
  w.magic = 0;
  assert_int_equal(dm_fatbin_from_wrapper(&w, &fb, NULL, 0), -EINVAL);
  /* A fatbin header claiming an absurd size is refused. */
  uint64_t huge = (uint64_t)1 << 40;
  memcpy(buf + 8, &huge, 8);
  w.magic = DM_FATBIN_WRAPPER_MAGIC;
  w.fatbin = buf;
  assert_int_equal(dm_fatbin_from_wrapper(&w, &fb, NULL, 0), -EINVAL);
  free(buf);
}

static void test_image_kind(void **state) {
  (void)state;
  size_t len;
  unsigned char *c = fx_read("malloc.cubin", &len);
  assert_int_equal(dm_image_kind(c, len), DM_IMG_ELF);
  assert_int_equal(dm_image_kind(c, 3), DM_IMG_UNKNOWN);
  assert_int_equal(dm_image_kind(".version 9.0\n", 13), DM_IMG_PTX);
  assert_int_equal(dm_image_kind("//\n// Generated", 10), DM_IMG_PTX);
  assert_int_equal(dm_image_kind("\x01\x02\x03\x04", 4), DM_IMG_UNKNOWN);
  assert_int_equal(dm_image_kind(NULL, 8), DM_IMG_UNKNOWN);
  free(c);
}

/* Every truncation: as a shorter buffer (header must refuse), and with the
 * header patched to claim exactly the bytes present (entries must refuse or
 * stay in bounds). */
static void test_truncated(void **state) {
  (void)state;
  for (size_t i = 0; i < NFX; i++) {
    size_t len;
    unsigned char *buf = fx_read(fixtures[i].file, &len);
    size_t step = len > 12000 ? 7 : 1;
    for (size_t n = 0; n < len; n += step) {
      unsigned char *t = fx_copy(buf, n);
      dm_fatbin_t fb;
      assert_true(dm_fatbin_open(t, n, &fb, NULL, 0) < 0);
      if (n >= 16) {
        uint64_t body = n - 16;
        memcpy(t + 8, &body, 8);
        walk(t, n);
      }
      free(t);
    }
    free(buf);
  }
}

/* Overwrite each byte of every entry header (and of the fatbin header) with
 * several values, and random payload bytes, then walk the result. */
static void test_corrupted(void **state) {
  (void)state;
  static const unsigned char vals[] = {0x00, 0xff, 0x7f, 0x80, 0x01, 0x40};
  unsigned seed = 12345;
  for (size_t i = 0; i < NFX; i++) {
    size_t len;
    unsigned char *buf = fx_read(fixtures[i].file, &len);
    /* header offsets: the fatbin header and each entry header */
    size_t offs[16], hs[16], nh = 0;
    offs[nh] = 0;
    hs[nh++] = 16;
    dm_fatbin_t fb;
    assert_int_equal(dm_fatbin_open(buf, len, &fb, NULL, 0), 0);
    size_t cur = 0;
    dm_fb_entry_t e;
    while (dm_fatbin_next(&fb, &cur, &e, NULL, 0) == 1 && nh < 16) {
      offs[nh] = e.offset;
      hs[nh++] = e.header_size;
    }
    for (size_t h = 0; h < nh; h++)
      for (size_t o = offs[h]; o < offs[h] + hs[h]; o++)
        for (size_t v = 0; v < sizeof vals; v++) {
          unsigned char *t = fx_copy(buf, len);
          t[o] = vals[v];
          walk(t, len);
          free(t);
        }
    for (int k = 0; k < 300; k++) {
      unsigned char *t = fx_copy(buf, len);
      for (int f = 0; f < 1 + k % 4; f++) {
        seed = seed * 1103515245u + 12345u;
        t[(seed >> 8) % len] ^= (unsigned char)(1u << (seed % 8));
      }
      walk(t, len);
      free(t);
    }
    free(buf);
  }
}

static void test_bad_entry_fields(void **state) {
  (void)state;
  size_t len;
  unsigned char *buf = fx_read("malloc_default.fatbin", &len);
  dm_fatbin_t fb;
  assert_int_equal(dm_fatbin_open(buf, len, &fb, NULL, 0), 0);
  size_t cur = 0;
  dm_fb_entry_t e, ptx = {0};
  while (dm_fatbin_next(&fb, &cur, &e, NULL, 0) == 1)
    if (e.kind == DM_FB_KIND_PTX) ptx = e;
  assert_int_equal(ptx.kind, DM_FB_KIND_PTX);
  size_t h = ptx.offset;
  char why[200];
#define PATCHED(off, type, val, expect)                                                             \
  do {                                                                                              \
    unsigned char *t = fx_copy(buf, len);                                                           \
    type v_ = (val);                                                                                \
    memcpy(t + h + (off), &v_, sizeof v_);                                                          \
    dm_fatbin_t f2;                                                                                 \
    size_t c2 = 0;                                                                                  \
    dm_fb_entry_t e2;                                                                               \
    int r2;                                                                                         \
    assert_int_equal(dm_fatbin_open(t, len, &f2, NULL, 0), 0);                                      \
    while ((r2 = dm_fatbin_next(&f2, &c2, &e2, why, sizeof why)) == 1 && e2.kind != DM_FB_KIND_PTX) \
      ;                                                                                             \
    if (r2 == 1) {                                                                                  \
      unsigned char *img;                                                                           \
      size_t sz;                                                                                    \
      r2 = dm_fb_entry_load(&e2, &img, &sz, why, sizeof why);                                       \
      if (r2 == 0) free(img);                                                                       \
    }                                                                                               \
    assert_int_equal(r2, expect);                                                                   \
    free(t);                                                                                        \
  } while (0)
  PATCHED(0x04, uint32_t, 8, -EINVAL);            /* header size too small */
  PATCHED(0x04, uint32_t, 0x7fffffff, -EINVAL);   /* header size too big */
  PATCHED(0x08, uint64_t, (uint64_t)-1, -EINVAL); /* payload past end */
  PATCHED(0x10, uint32_t, 0, -EINVAL);            /* no compressed bytes */
  PATCHED(0x10, uint32_t, (uint32_t)ptx.payload_size + 1, -EINVAL);
  PATCHED(0x10, uint32_t, ptx.compressed_size - 1, -EINVAL); /* short zstd frame */
  PATCHED(0x38, uint64_t, ptx.uncompressed_size + 1, -EINVAL);
  PATCHED(0x38, uint64_t, ptx.uncompressed_size - 1, -EINVAL);
  PATCHED(0x38, uint64_t, (uint64_t)1 << 50, -EINVAL);
  PATCHED(0x28, uint64_t, ptx.flags | DM_FB_FLAG_LZ4, -ENOTSUP); /* two codecs */
  PATCHED(0x28, uint64_t, (ptx.flags & ~(uint64_t)DM_FB_FLAG_ZSTD) | DM_FB_FLAG_LZ4, -EINVAL);
  PATCHED(0x48, uint8_t, 0xff, 0); /* options bytes: ignored */
  /* Bad fatbin headers. */
  unsigned char *t = fx_copy(buf, len);
  t[0] ^= 1;
  assert_int_equal(dm_fatbin_open(t, len, &fb, why, sizeof why), -EINVAL);
  t[0] ^= 1;
  t[4] = 2;
  assert_int_equal(dm_fatbin_open(t, len, &fb, why, sizeof why), -ENOTSUP);
  t[4] = 1;
  t[6] = 4;
  assert_int_equal(dm_fatbin_open(t, len, &fb, why, sizeof why), -EINVAL);
  free(t);
  free(buf);
}

/* Two fatbins with padding between them, as in a host .nv_fatbin section. */
static void test_section_scan(void **state) {
  (void)state;
  size_t a, b;
  unsigned char *x = fx_read("plain_default.fatbin", &a);
  unsigned char *y = fx_read("malloc_lz4_all.fatbin", &b);
  size_t pad = ((a + 7) & ~(size_t)7) + 16;
  size_t len = pad + b;
  unsigned char *sec = calloc(1, len);
  memcpy(sec, x, a);
  memcpy(sec + pad, y, b);
  size_t off = 0;
  dm_fatbin_t fb;
  assert_int_equal(dm_fatbin_next_in_section(sec, len, &off, &fb, NULL, 0), 1);
  assert_int_equal(fb.size, a);
  assert_int_equal(dm_fatbin_next_in_section(sec, len, &off, &fb, NULL, 0), 1);
  assert_ptr_equal(fb.data, sec + pad);
  assert_int_equal(walk(fb.data, fb.size), 2);
  assert_int_equal(dm_fatbin_next_in_section(sec, len, &off, &fb, NULL, 0), 0);
  /* A truncated second fatbin is an error, not an overread. */
  unsigned char *cut = fx_copy(sec, len - 1);
  off = 0;
  assert_int_equal(dm_fatbin_next_in_section(cut, len - 1, &off, &fb, NULL, 0), 1);
  assert_true(dm_fatbin_next_in_section(cut, len - 1, &off, &fb, NULL, 0) < 0);
  free(cut);
  free(sec);
  free(x);
  free(y);
}

static void test_decompress_direct(void **state) {
  (void)state;
  unsigned char out[16];
  char why[200];
  assert_int_equal(dm_decompress(DM_CODEC_ZSTD, "garbage!", 8, out, sizeof out, why, sizeof why), -EINVAL);
  assert_int_equal(dm_decompress(DM_CODEC_LZ4, "\xff\xff\xff", 3, out, sizeof out, why, sizeof why), -EINVAL);
  assert_int_equal(dm_decompress(-1, "x", 1, out, 1, why, sizeof why), -ENOTSUP);
  assert_int_equal(dm_decompress(DM_CODEC_NONE, "abc", 3, out, 3, why, sizeof why), 0);
  assert_memory_equal(out, "abc", 3);
}

/* A zstd frame of RLE blocks declaring 1 GiB: about 32 KiB that would
 * inflate to 1 GiB. Refused from its declared size, before any allocation. */
static void test_zstd_bomb(void **state) {
  (void)state;
  const size_t total = (size_t)1 << 30, block = (size_t)128 << 10;
  size_t nblk = total / block, n = 4 + 1 + 8 + nblk * 4;
  unsigned char *f = malloc(n), *p = f;
  assert_non_null(f);
  const uint32_t magic = 0xFD2FB528u;
  memcpy(p, &magic, 4);
  p += 4;
  *p++ = 0xE0; /* single segment, 8-byte content size */
  uint64_t fcs = total;
  memcpy(p, &fcs, 8);
  p += 8;
  for (size_t i = 0; i < nblk; i++) {
    uint32_t h = (uint32_t)(block << 3) | (1u << 1) | (i + 1 == nblk); /* RLE block */
    *p++ = h & 0xff;
    *p++ = (h >> 8) & 0xff;
    *p++ = (h >> 16) & 0xff;
    *p++ = ' ';
  }
  dm_fb_entry_t e = {.kind = DM_FB_KIND_PTX,
                     .codec = DM_CODEC_ZSTD,
                     .payload = f,
                     .payload_size = n,
                     .compressed_size = (uint32_t)n,
                     .uncompressed_size = total};
  unsigned char *out = NULL;
  size_t sz = 0;
  char why[200];
  assert_int_equal(dm_fb_entry_load(&e, &out, &sz, why, sizeof why), -ENOMEM);
  assert_null(out);
  assert_non_null(strstr(why, "ratio"));
  /* a modest declared size from the same kind of frame is honoured */
  const size_t small = 8 << 10;
  uint32_t h = (uint32_t)(small << 3) | (1u << 1) | 1u; /* one RLE block, the last */
  f[13] = h & 0xff;
  f[14] = (h >> 8) & 0xff;
  f[15] = (h >> 16) & 0xff;
  fcs = small;
  memcpy(f + 5, &fcs, 8);
  e.uncompressed_size = small;
  e.payload_size = e.compressed_size = 4 + 1 + 8 + 4;
  assert_int_equal(dm_fb_entry_load(&e, &out, &sz, why, sizeof why), 0);
  assert_int_equal(sz, small);
  free(out);
  free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fixtures_parse),    cmocka_unit_test(test_codecs_agree),
      cmocka_unit_test(test_wrapper),           cmocka_unit_test(test_image_kind),
      cmocka_unit_test(test_bad_entry_fields),  cmocka_unit_test(test_section_scan),
      cmocka_unit_test(test_decompress_direct), cmocka_unit_test(test_zstd_bomb),
      cmocka_unit_test(test_truncated),         cmocka_unit_test(test_corrupted),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
