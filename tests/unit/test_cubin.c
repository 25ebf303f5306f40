/*
 * test_cubin.c — libelf inspection of cubins (a program with device malloc,
 * one without, one with a devmalloc-like definition) and the PTX scan on
 * nvcc's and hand-written PTX. Built with -fsanitize=address,undefined.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "cubin_elf.h"
#include "ptx_scan.h"
#include "relink_test_util.h"

static void inspect(const char *file, dm_cubin_info_t *ci) {
  size_t len;
  unsigned char *b = fx_read(file, &len);
  char why[200] = "";
  int rc = dm_cubin_inspect(b, len, ci, why, sizeof why);
  if (rc != 0) fail_msg("%s: %s", file, why);
  size_t sz = 0;
  assert_int_equal(dm_elf_image_size(b, len, &sz, why, sizeof why), 0);
  assert_int_equal(sz, len); /* nvcc puts the section table last */
  free(b);
}

static void test_malloc_cubin(void **state) {
  (void)state;
  dm_cubin_info_t ci;
  inspect("malloc.cubin", &ci);
  assert_int_equal(ci.machine, DM_EM_CUDA);
  assert_int_equal(ci.sm, 90);
  assert_true(ci.calls_malloc && ci.calls_free && ci.calls_aligned);
  assert_false(ci.defines_malloc || ci.has_heap_desc);
  assert_true(dm_cubin_uses_stock_malloc(&ci));
  assert_false(dm_cubin_has_devmalloc(&ci));
  assert_false(ci.relocatable);
}

static void test_plain_cubin(void **state) {
  (void)state;
  dm_cubin_info_t ci;
  inspect("plain.cubin", &ci);
  assert_false(dm_cubin_uses_stock_malloc(&ci));
  assert_false(dm_cubin_has_devmalloc(&ci));
  assert_true(ci.nsyms > 0);
}

static void test_devmalloc_cubin(void **state) {
  (void)state;
  dm_cubin_info_t ci;
  inspect("devmalloc_rdc.cubin", &ci);
  assert_true(ci.defines_malloc && ci.defines_free && ci.defines_aligned);
  assert_true(ci.has_heap_desc);
  assert_true(dm_cubin_has_devmalloc(&ci));
  assert_false(dm_cubin_uses_stock_malloc(&ci));
  assert_true(ci.relocatable);
}

static void test_not_cubin(void **state) {
  (void)state;
  dm_cubin_info_t ci;
  char why[200];
  size_t len;
  unsigned char *b = fx_read("app_malloc", &len); /* a host ELF */
  assert_int_equal(dm_cubin_inspect(b, len, &ci, why, sizeof why), -EINVAL);
  assert_non_null(strstr(why, "190"));
  free(b);
  assert_int_equal(dm_cubin_inspect("\x7f"
                                    "ELF",
                                    4, &ci, why, sizeof why),
                   -EINVAL);
  assert_int_equal(dm_cubin_inspect("hello world, this is not an ELF image at all....."
                                    "................",
                                    64, &ci, why, sizeof why),
                   -EINVAL);
}

/* Truncations and corruptions: rejected or answered, never a crash. */
static void test_cubin_damage(void **state) {
  (void)state;
  size_t len;
  unsigned char *b = fx_read("malloc.cubin", &len);
  dm_cubin_info_t ci;
  size_t sz;
  for (size_t n = 0; n < len; n += 13) {
    unsigned char *t = fx_copy(b, n);
    dm_cubin_inspect(t, n, &ci, NULL, 0);
    assert_true(dm_elf_image_size(t, n, &sz, NULL, 0) < 0 || sz <= n);
    free(t);
  }
  unsigned seed = 99;
  for (int k = 0; k < 3000; k++) {
    unsigned char *t = fx_copy(b, len);
    seed = seed * 1103515245u + 12345u;
    size_t pos = k < 64 ? (size_t)k : (seed >> 8) % len;
    t[pos] ^= (unsigned char)(1u + (seed >> 3) % 255);
    dm_cubin_inspect(t, len, &ci, NULL, 0);
    assert_true(dm_elf_image_size(t, len, &sz, NULL, 0) < 0 || sz <= len);
    free(t);
  }
  free(b);
}

static void scan(const char *ptx, dm_ptx_info_t *pi) {
  assert_int_equal(dm_ptx_scan(ptx, strlen(ptx), pi), 0);
}

static void test_ptx_scan(void **state) {
  (void)state;
  dm_ptx_info_t pi;
  size_t len;
  unsigned char *b = fx_read("stub_devmalloc.ptx", &len);
  assert_int_equal(dm_ptx_scan((char *)b, len, &pi), 0);
  assert_true(dm_ptx_has_devmalloc(&pi));
  assert_false(dm_ptx_uses_stock_malloc(&pi));
  assert_int_equal(pi.target_sm, 90);
  assert_int_equal(pi.version_major, 9);
  free(b);

  /* whitespace-normalized and spread-out declarations both count */
  scan(".version 8.5\n.target sm_80\n.address_size 64\n"
       ".extern .func (.param .b64 func_retval0) malloc\n(\n.param .b64 malloc_param_0\n)\n;\n",
       &pi);
  assert_true(pi.extern_malloc);
  assert_int_equal(pi.target_sm, 80);
  assert_int_equal(pi.version_minor, 5);
  scan(".extern\n\t.func\n  (\n .param .b64 r\n )\n\tfree\n(\n.param .b64 p\n)\n;", &pi);
  assert_true(pi.extern_free);
  /* comments, other names and calls in bodies do not */
  scan("// .extern .func (.param .b64 func_retval0) malloc ( .param .b64 x );\n"
       "/* .extern .func free ( .param .b64 x ); */\n"
       ".extern .func (.param .b64 func_retval0) mallocx ( .param .b64 x );\n"
       ".visible .entry k() { call.uni (r), malloc, (p); }\n",
       &pi);
  assert_false(dm_ptx_uses_stock_malloc(&pi));
  assert_false(pi.defines_malloc);
  /* the aligned entry point of CUDA 13 */
  scan(".extern .func (.param .b64 func_retval0) __cuda_syscall_aligned_malloc (.param .b64 a, .param .b64 "
       "b);",
       &pi);
  assert_true(pi.extern_aligned);
  /* a definition */
  scan(".visible .func (.param .b64 func_retval0) malloc(.param .b64 n) { ret; }\n"
       ".visible .global .align 8 .u64 devmalloc_heap_desc;\n",
       &pi);
  assert_true(pi.defines_malloc && pi.has_heap_desc);
  /* unterminated comment / garbage */
  scan("/* never closed .extern .func malloc", &pi);
  assert_false(pi.extern_malloc);
  scan("}}}{{{ ;;; \"unterminated .extern .func malloc", &pi);
  assert_false(pi.extern_malloc);
  /* stops at the length given */
  const char *t = ".extern .func (.param .b64 func_retval0) malloc;";
  assert_int_equal(dm_ptx_scan(t, 20, &pi), 0);
  assert_false(pi.extern_malloc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_malloc_cubin),    cmocka_unit_test(test_plain_cubin),
      cmocka_unit_test(test_devmalloc_cubin), cmocka_unit_test(test_not_cubin),
      cmocka_unit_test(test_cubin_damage),    cmocka_unit_test(test_ptx_scan),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
