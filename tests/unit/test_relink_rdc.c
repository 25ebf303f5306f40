/*
 * test_relink_rdc.c — the re-link of -rdc images and devmalloc's relocatable
 * SASS, end to end against a fake Driver API (no GPU): an -rdc shared library
 * (dlopen'ed; loading it calls no driver) is re-linked from its relocatable
 * units (cubins of the device's arch, or PTX where it has none) with
 * devmalloc's SASS for the arch (its PTX for an arch the shim has no SASS
 * for), taken from the cache the second time; a dynamic-parallelism library
 * carrying libcudadevrt's units links without the library; an image given
 * from a buffer (no file) keeps stock with a reason saying "no PTX"; a PTX
 * module is linked with devmalloc's SASS.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <cmocka.h>
#include <cuda.h>
#include "fatbin.h"
#include "jit_link.h"
#include "relfatbin.h"
#include "relink.h"
#include "relink_test_util.h"
#include "fake_link.h"

/* ---- fake driver: records the kind of every input ---- */
#define MAXIN 64
static int fake_refuse_cubin_named_devmalloc;
static int fake_kinds[MAXIN], fake_nin;
static char fake_names[MAXIN][32];

static CUresult f_link_create(unsigned n, CUjit_option *o, void **v, CUlinkState *ls) {
  fake_nin = 0;
  return fake_link_create(n, o, v, ls);
}
static CUresult f_link_add(CUlinkState ls, CUjitInputType t, void *data, size_t size, const char *name,
                           unsigned n, CUjit_option *o, void **v) {
  (void)n;
  (void)o;
  (void)v;
  fake_state_t *s = (fake_state_t *)ls;
  if (t == CU_JIT_INPUT_CUBIN) {
    assert_memory_equal(data, "\177ELF", 4);
    if (fake_refuse_cubin_named_devmalloc && !strcmp(name, "devmalloc.cubin"))
      return CUDA_ERROR_INVALID_IMAGE;
  } else {
    assert_int_equal(t, CU_JIT_INPUT_PTX);
    assert_int_equal(((char *)data)[size - 1], 0);
  }
  if (fake_nin < MAXIN) {
    fake_kinds[fake_nin] = (int)t;
    snprintf(fake_names[fake_nin], sizeof fake_names[0], "%s", name);
  }
  fake_nin++;
  fake_link_append(s, data, size);
  return CUDA_SUCCESS;
}
#include "fake_jit.h"

static char cache_root[DM_FX_ROOT];

static int setup(void **state) {
  (void)state;
  if (fx_scratch_make(cache_root, "/tmp/dm-relink-rdc-XXXXXX")) return -1;
  unsetenv("DEVMALLOC_JIT_SASS");
  dm_jit_set_resolver(fake_resolve);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return fx_scratch_remove(cache_root);
}

/* The device-linked image of a fixture library, where it is loaded. */
static const void *lib_image(const char *file, const char *anchor, size_t *len) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", FIXTURE_DIR, file);
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL); /* kept open: the image lives there */
  assert_non_null(h);
  dm_elf_origin_t o;
  assert_int_equal(dm_elf_origin(dlsym(h, anchor), &o), 1);
  int fd = open(path, O_RDONLY);
  dm_elf_cuda_secs_t s;
  char why[200];
  assert_int_equal(dm_elf_cuda_sections(fd, &s, why, sizeof why), 0);
  close(fd);
  const void *img = (const void *)(o.bias + s.fatbin.addr);
  dm_fatbin_t fb;
  assert_int_equal(dm_fatbin_open(img, s.fatbin.size, &fb, why, sizeof why), 0);
  *len = fb.size;
  return img;
}

static int relink(const void *img, size_t len, char *why, size_t wl) {
  const void *out = NULL;
  size_t sz = 0;
  why[0] = 0;
  int r = dm_relink_sized(img, img, len, &out, &sz, why, wl);
  if (r == 1) {
    assert_non_null(out);
    dm_relink_free(out);
  }
  return r;
}

static void test_rdc_sass(void **state) {
  (void)state;
  size_t len;
  const void *img = lib_image("rdc_multi.so", "fx_rdc_anchor", &len);
  char why[600];
  fake_cc_major = 9, fake_cc_minor = 0;
  int links = fake_links;
  if (relink(img, len, why, sizeof why) != 1) fail_msg("not re-linked: %s", why);
  assert_int_equal(fake_links, links + 1);
  assert_int_equal(fake_nin, 3); /* two units and devmalloc: all SASS */
  for (int i = 0; i < 3; i++) assert_int_equal(fake_kinds[i], CU_JIT_INPUT_CUBIN);
  assert_string_equal(fake_names[2], "devmalloc.cubin");
  assert_int_equal(relink(img, len, why, sizeof why), 1); /* the cache */
  assert_int_equal(fake_links, links + 1);

  fake_cc_major = 10, fake_cc_minor = 0; /* units' PTX, devmalloc's sm_100 SASS */
  assert_int_equal(relink(img, len, why, sizeof why), 1);
  assert_int_equal(fake_nin, 3);
  assert_int_equal(fake_kinds[0], CU_JIT_INPUT_PTX);
  assert_int_equal(fake_kinds[1], CU_JIT_INPUT_PTX);
  assert_int_equal(fake_kinds[2], CU_JIT_INPUT_CUBIN);

  fake_cc_major = 8, fake_cc_minor = 7; /* no SASS of either: all PTX? no: units unusable */
  assert_int_equal(relink(img, len, why, sizeof why), 0);
  assert_non_null(strstr(why, "no PTX"));
  assert_non_null(strstr(why, "neither sm_87 code nor PTX"));

  fake_cc_major = 8, fake_cc_minor = 0; /* a driver refusing the SASS: devmalloc's PTX */
  fake_refuse_cubin_named_devmalloc = 1;
  assert_int_equal(relink(img, len, why, sizeof why), 1);
  assert_string_equal(fake_names[2], "devmalloc.ptx");
  assert_int_equal(fake_kinds[2], CU_JIT_INPUT_PTX);
  fake_refuse_cubin_named_devmalloc = 0;
  fake_cc_major = 9, fake_cc_minor = 0;
}

static void test_rdc_cdp(void **state) {
  (void)state;
  size_t len;
  const void *img = lib_image("rdc_cdp.so", "fx_cdp_anchor", &len);
  char why[600];
  if (relink(img, len, why, sizeof why) != 1) fail_msg("not re-linked: %s", why);
  for (int i = 0; i < fake_nin && i < MAXIN; i++) /* its own libcudadevrt units */
    assert_int_not_equal(fake_kinds[i], CU_JIT_INPUT_LIBRARY);
  assert_true(fake_nin >= 3);
}

static void test_rdc_from_buffer(void **state) {
  (void)state;
  size_t len;
  const void *img = lib_image("rdc_multi.so", "fx_rdc_anchor", &len);
  unsigned char *copy = fx_copy(img, len); /* no file holds it */
  char why[600];
  assert_int_equal(relink(copy, len, why, sizeof why), 0);
  assert_non_null(strstr(why, "no PTX"));
  assert_non_null(strstr(why, "in no loaded file"));
  free(copy);
}

static void test_ptx_with_sass(void **state) {
  (void)state;
  size_t len;
  unsigned char *b = fx_read("malloc_default.fatbin", &len);
  char why[600];
  assert_int_equal(relink(b, len, why, sizeof why), 1);
  assert_int_equal(fake_nin, 2);
  assert_int_equal(fake_kinds[0], CU_JIT_INPUT_PTX);
  assert_int_equal(fake_kinds[1], CU_JIT_INPUT_CUBIN);
  free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rdc_sass),
      cmocka_unit_test(test_rdc_cdp),
      cmocka_unit_test(test_rdc_from_buffer),
      cmocka_unit_test(test_ptx_with_sass),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
