/*
 * test_image_bound.c — the load-time pre-scan (interpose/image/image_bound.c,
 * image_scan.c) against hostile images passed without a size, each placed at
 * the very end of a readable mapping followed by an inaccessible page, so a
 * read past the image is a SIGSEGV and a runaway size a hang (alarm). Built
 * with AddressSanitizer and UBSan. Every malformed image must come back
 * "unknown" (the driver then judges it), every good one must still be found.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "shim.h"

#define PAGES 4

static unsigned char *region; /* PAGES readable pages, then one PROT_NONE page */
static size_t page;

static int setup(void **st) {
  page = (size_t)sysconf(_SC_PAGESIZE);
  region = mmap(NULL, (PAGES + 1) * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(region != MAP_FAILED);
  assert_int_equal(mprotect(region + PAGES * page, page, PROT_NONE), 0);
  alarm(20); /* a wrapped size scans forever: fail, do not hang */
  return 0;
}

static int teardown(void **st) {
  munmap(region, (PAGES + 1) * page);
  alarm(0);
  return 0;
}

/* Copy n bytes so that they end exactly at the inaccessible page. */
static unsigned char *at_end(const void *img, size_t n) {
  unsigned char *p = region + PAGES * page - n;
  memset(region, 0, PAGES * page);
  memcpy(p, img, n);
  return p;
}

static void put16(unsigned char *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }

static void t_readable_prefix(void **st) {
  assert_int_equal(dm_readable_prefix(region, PAGES * page), PAGES * page);
  assert_int_equal(dm_readable_prefix(region, (PAGES + 1) * page), PAGES * page);
  assert_int_equal(dm_readable_prefix(region + PAGES * page, 1), 0);
  assert_int_equal(dm_readable_prefix(region + 1, 3 * page), 3 * page);
  assert_int_equal(dm_readable_prefix(NULL, 16), 0);
}

/* 80 bytes: header 16, one entry of header 64 whose payload size makes
 * offset + header + payload wrap past 2^64 to 16. */
static void t_fatbin_wrapping_sizes(void **st) {
  unsigned char fb[80] = {0};
  put32(fb, 0xBA55ED50u);
  put16(fb + 4, 1);
  put16(fb + 6, 16);
  put64(fb + 8, 64);
  put16(fb + 16, 2);
  put32(fb + 16 + 4, 64);
  put64(fb + 16 + 8, (uint64_t)0 - 64);
  unsigned char *p = at_end(fb, sizeof fb);
  assert_int_equal(dm_image_has_devmalloc(p), DM_HAS_UNKNOWN);
  assert_int_equal(dm_image_scan(fb, sizeof fb), DM_HAS_UNKNOWN);
  /* entry header size wrapping instead */
  put32(fb + 16 + 4, 0xFFFFFFF0u);
  put64(fb + 16 + 8, 0);
  assert_int_equal(dm_image_has_devmalloc(at_end(fb, sizeof fb)), DM_HAS_UNKNOWN);
}

/* A fatbin whose header declares more bytes than are mapped. */
static void t_fatbin_past_mapping(void **st) {
  unsigned char fb[80] = {0};
  put32(fb, 0xBA55ED50u);
  put16(fb + 6, 16);
  put64(fb + 8, 1u << 20);
  assert_int_equal(dm_image_has_devmalloc(at_end(fb, sizeof fb)), DM_HAS_UNKNOWN);
  assert_int_equal(dm_image_size(at_end(fb, sizeof fb)), 0);
  put64(fb + 8, UINT64_MAX); /* header + body wraps */
  assert_int_equal(dm_image_size(at_end(fb, sizeof fb)), 0);
  put16(fb + 6, 0); /* header shorter than itself */
  put64(fb + 8, 64);
  assert_int_equal(dm_image_size(at_end(fb, sizeof fb)), 0);
}

static void elf_header(unsigned char *e, uint64_t shoff, uint16_t shnum) {
  memset(e, 0, 64);
  memcpy(e, "\177ELF", 4);
  e[4] = 2;
  put16(e + 0x12, 190);
  put64(e + 0x28, shoff);
  put16(e + 0x3a, 64);
  put16(e + 0x3c, shnum);
}

static void t_elf_table_past_image(void **st) {
  unsigned char e[64];
  elf_header(e, 64, 8); /* table right after the header: in the guard page */
  assert_int_equal(dm_image_has_devmalloc(at_end(e, sizeof e)), DM_HAS_UNKNOWN);
  elf_header(e, UINT64_MAX - 32, 2); /* offset + table wraps */
  assert_int_equal(dm_image_has_devmalloc(at_end(e, sizeof e)), DM_HAS_UNKNOWN);
}

static void t_elf_section_past_image(void **st) {
  unsigned char e[64 + 2 * 64 + 32] = {0};
  elf_header(e, 64, 2);
  unsigned char *sh = e + 64 + 64; /* section 1: PROGBITS */
  put32(sh + 4, 1);
  put64(sh + 0x18, 64 + 128);
  put64(sh + 0x20, 1u << 20); /* runs past the mapping */
  assert_int_equal(dm_image_has_devmalloc(at_end(e, sizeof e)), DM_HAS_UNKNOWN);
  put64(sh + 0x18, UINT64_MAX - 8); /* offset + size wraps */
  put64(sh + 0x20, 64);
  assert_int_equal(dm_image_has_devmalloc(at_end(e, sizeof e)), DM_HAS_UNKNOWN);
  put64(sh + 0x18, 64 + 128); /* honest: the image is searched */
  put64(sh + 0x20, 32);
  memcpy(e + 64 + 128, "devmalloc_heap_desc", 19);
  assert_int_equal(dm_image_has_devmalloc(at_end(e, sizeof e)), DM_HAS_YES);
  assert_int_equal(dm_image_size(at_end(e, sizeof e)), sizeof e);
  put32(sh + 4, 8); /* NOBITS sections occupy nothing */
  put64(sh + 0x20, 1u << 30);
  assert_int_equal(dm_image_size(at_end(e, sizeof e)), 64 + 128);
}

static void t_ptx_unterminated(void **st) {
  static const char txt[] = ".version 8.0\n.global .u64 devmalloc_heap_desc;";
  assert_int_equal(dm_image_has_devmalloc(at_end(txt, sizeof txt - 1)), DM_HAS_UNKNOWN);
  assert_int_equal(dm_image_has_devmalloc(at_end(txt, sizeof txt)), DM_HAS_YES);
  /* text spanning several pages is still found */
  memset(region, ' ', PAGES * page);
  memcpy(region + PAGES * page - 40, "devmalloc_heap_desc", 19);
  region[PAGES * page - 1] = 0;
  region[0] = '.';
  assert_int_equal(dm_image_has_devmalloc(region), DM_HAS_YES);
}

static void t_wrapper_bad_pointer(void **st) {
  struct {
    uint32_t magic, version;
    const void *data;
    void *unused;
  } w = {0x466243B1u, 1, 0, 0};
  assert_int_equal(dm_image_has_devmalloc(&w), DM_HAS_UNKNOWN);
  w.data = region + PAGES * page; /* inaccessible */
  assert_int_equal(dm_image_has_devmalloc(&w), DM_HAS_UNKNOWN);
  w.data = region + PAGES * page - 2; /* magic straddles the guard page */
  assert_int_equal(dm_image_has_devmalloc(&w), DM_HAS_UNKNOWN);
  /* the wrapper itself at the end of the mapping, cut short */
  assert_int_equal(dm_image_has_devmalloc(at_end(&w, 8)), DM_HAS_UNKNOWN);
  assert_int_equal(dm_image_has_devmalloc(region + PAGES * page), DM_HAS_UNKNOWN);
}

/* The program's own registration (tests/fixtures/fx_registered.c): the one
 * wrapper's fatbin, which bounds to the fixture's size. */
extern const unsigned char fx_registered_fatbin[], fx_registered_fatbin_end[];
static void t_exe_fatbins(void **st) {
  (void)st;
  const void *fb[4];
  size_t len;
  assert_int_equal(dm_exe_fatbins(fb, 0), 0);
  assert_int_equal(dm_exe_fatbins(fb, 4), 1);
  assert_ptr_equal(fb[0], fx_registered_fatbin);
  assert_ptr_equal(dm_image_bound(fb[0], &len), fb[0]);
  assert_int_equal(len, (size_t)(fx_registered_fatbin_end - fx_registered_fatbin));
  assert_int_not_equal(dm_image_scan(fb[0], len), DM_HAS_YES);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_readable_prefix),        cmocka_unit_test(t_fatbin_wrapping_sizes),
      cmocka_unit_test(t_fatbin_past_mapping),    cmocka_unit_test(t_elf_table_past_image),
      cmocka_unit_test(t_elf_section_past_image), cmocka_unit_test(t_ptx_unterminated),
      cmocka_unit_test(t_wrapper_bad_pointer),    cmocka_unit_test(t_exe_fatbins),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
