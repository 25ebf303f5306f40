/*
 * test_relfatbin.c — the relocatable code of -rdc images (relfatbin.h) on
 * images and objects nvcc built (mk/interpose_image_relink.mk): the section found in a shared
 * library and in objects, the input chosen per unit and device arch
 * (relocatable SASS of the arch, else PTX, else unusable or LTO only), the
 * device-runtime decision, the kernel coverage check, the loaded file found
 * from an address, and truncated or damaged sections (clean errors; built
 * with -fsanitize=address,undefined).
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
#include "cubin_elf.h"
#include "decompress.h"
#include "fatbin.h"
#include "relfatbin.h"
#include "relink_test_util.h"

/* A section of a fixture file, copied into an exactly-sized buffer. */
static unsigned char *fx_section(const char *file, const char *name, size_t *len) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", FIXTURE_DIR, file);
  int fd = open(path, O_RDONLY);
  assert_true(fd >= 0);
  dm_elf_cuda_secs_t s;
  char why[200];
  assert_int_equal(dm_elf_cuda_sections(fd, &s, why, sizeof why), 0);
  const dm_elf_sec_t *d = !strcmp(name, DM_FATBIN_SECTION) ? &s.fatbin : &s.relfatbin;
  assert_true(d->found);
  unsigned char *b = malloc(d->size);
  assert_non_null(b);
  assert_int_equal(pread(fd, b, d->size, (off_t)d->offset), (ssize_t)d->size);
  close(fd);
  *len = d->size;
  return b;
}

static dm_rel_plan_t plan_of(const char *file, unsigned cc) {
  size_t len;
  unsigned char *sec = fx_section(file, DM_RELFATBIN_SECTION, &len);
  dm_rel_plan_t p;
  char why[200];
  int rc = dm_rel_plan(sec, len, cc, &p, why, sizeof why);
  if (rc < 0) fail_msg("%s: %s", file, why);
  free(sec);
  return p;
}

static void test_two_units(void **state) {
  (void)state;
  dm_rel_plan_t p = plan_of("rdc_multi.so", 90);
  assert_int_equal(p.n, 2);
  assert_int_equal(p.nsass, 2);
  assert_int_equal(p.nptx, 0);
  assert_true(p.uses_stock);
  assert_false(p.has_devmalloc);
  assert_false(p.needs_devrt);
  for (unsigned i = 0; i < p.n; i++) {
    dm_cubin_info_t ci;
    char why[200];
    assert_int_equal(p.units[i].form, DM_REL_SASS);
    assert_int_equal(p.units[i].arch, 90);
    assert_int_equal(dm_cubin_inspect(p.units[i].data, p.units[i].size, &ci, why, sizeof why), 0);
    assert_true(ci.relocatable);
    assert_int_equal(ci.sm, 90);
  }
  dm_rel_plan_free(&p);

  p = plan_of("rdc_multi.so", 80); /* its own sm_80 cubins */
  assert_int_equal(p.nsass, 2);
  assert_int_equal(p.units[0].arch, 80);
  dm_rel_plan_free(&p);

  p = plan_of("rdc_multi.so", 100); /* no sm_100: the compute_90 PTX */
  assert_int_equal(p.n, 2);
  assert_int_equal(p.nptx, 2);
  assert_int_equal(p.ptx_arch_max, 90);
  assert_true(p.uses_stock);
  assert_int_equal(p.units[0].data[p.units[0].size], 0); /* NUL-terminated */
  dm_rel_plan_free(&p);

  p = plan_of("rdc_multi.so", 86); /* sm_80 cubins do not link for sm_86 */
  assert_int_equal(p.n, 0);
  assert_int_equal(p.unusable, 2);
  assert_int_equal(p.first_missing_arch, 80);
  dm_rel_plan_free(&p);
}

static void test_devrt(void **state) {
  (void)state;
  dm_rel_plan_t p = plan_of("rdc_cdp.o", 90); /* launches, carries no runtime */
  assert_int_equal(p.n, 1);
  assert_true(p.needs_devrt);
  assert_true(p.uses_stock);
  dm_rel_plan_free(&p);
  p = plan_of("rdc_cdp.so", 90); /* -lcudadevrt: the runtime's units came along */
  assert_true(p.n >= 2);
  assert_false(p.needs_devrt);
  dm_rel_plan_free(&p);
}

static void test_lto_and_ptx_units(void **state) {
  (void)state;
  dm_rel_plan_t p = plan_of("rdc_lto.o", 90);
  assert_int_equal(p.n, 0);
  assert_int_equal(p.lto_only, 1);
  dm_rel_plan_free(&p);
  p = plan_of("rdc_ptx.o", 90);
  assert_int_equal(p.n, 1);
  assert_int_equal(p.nptx, 1);
  assert_int_equal(p.units[0].form, DM_REL_PTX);
  assert_int_equal(p.units[0].arch, 80);
  assert_false(p.uses_stock); /* fx_rdc_b.cu allocates nothing */
  dm_rel_plan_free(&p);
  p = plan_of("rdc_ptx.o", 75); /* PTX newer than the device */
  assert_int_equal(p.n, 0);
  assert_int_equal(p.unusable, 1);
  dm_rel_plan_free(&p);
}

/* The sm_90 ELF of the first fatbin in a file's .nv_fatbin, decompressed. */
static unsigned char *linked_image(const char *file, size_t *n) {
  size_t len, off = 0, cur = 0;
  unsigned char *sec = fx_section(file, DM_FATBIN_SECTION, &len);
  dm_fatbin_t fb;
  dm_fb_entry_t e;
  char why[200];
  unsigned char *img = NULL;
  assert_int_equal(dm_fatbin_next_in_section(sec, len, &off, &fb, why, sizeof why), 1);
  while (!img && dm_fatbin_next(&fb, &cur, &e, why, sizeof why) == 1)
    if (e.kind == DM_FB_KIND_ELF && e.arch == 90)
      assert_int_equal(dm_fb_entry_load(&e, &img, n, why, sizeof why), 0);
  free(sec);
  assert_non_null(img);
  return img;
}

static void test_covers(void **state) {
  (void)state;
  dm_rel_plan_t p = plan_of("rdc_multi.so", 90);
  size_t n;
  char why[300];
  unsigned char *img = linked_image("rdc_multi.so", &n);
  dm_cubin_info_t ci;
  assert_int_equal(dm_cubin_inspect(img, n, &ci, why, sizeof why), 0);
  assert_false(ci.relocatable); /* the device-linked image */
  assert_true(dm_cubin_uses_stock_malloc(&ci));
  assert_int_equal(dm_rel_plan_covers(&p, img, n, why, sizeof why), 1);
  free(img);
  size_t cl;
  unsigned char *other = fx_read("malloc.cubin", &cl); /* another program's kernels */
  assert_int_equal(dm_rel_plan_covers(&p, other, cl, why, sizeof why), 0);
  if (!strstr(why, "fx_alloc") && !strstr(why, "fx_free")) fail_msg("reason: %s", why);
  free(other);
  dm_rel_plan_free(&p);
  p = plan_of("rdc_multi.so", 100); /* PTX units name their kernels too */
  img = linked_image("rdc_multi.so", &n);
  assert_int_equal(dm_rel_plan_covers(&p, img, n, why, sizeof why), 1);
  free(img);
  dm_rel_plan_free(&p);
}

static void test_damaged(void **state) {
  (void)state;
  size_t len;
  unsigned char *sec = fx_section("rdc_multi.so", DM_RELFATBIN_SECTION, &len);
  char why[200];
  dm_rel_plan_t p;
  for (size_t cut = 0; cut < len; cut += 7) { /* truncated copies */
    unsigned char *c = fx_copy(sec, cut);
    if (dm_rel_plan(c, cut, 90, &p, why, sizeof why) == 0) dm_rel_plan_free(&p);
    free(c);
  }
  for (size_t i = 0; i < len; i += 5) { /* one byte flipped at a time */
    unsigned char *c = fx_copy(sec, len);
    c[i] ^= 0x5a;
    if (dm_rel_plan(c, len, 90, &p, why, sizeof why) == 0) dm_rel_plan_free(&p);
    free(c);
  }
  free(sec);
}

static void test_origin(void **state) {
  (void)state;
  dm_elf_origin_t o;
  assert_int_equal(dm_elf_origin((const void *)test_origin, &o), 1);
  assert_string_equal(o.path, "/proc/self/exe");
  assert_true(dm_elf_origin_maps(&o, (uintptr_t)test_origin, 16));
  int x;
  assert_int_equal(dm_elf_origin(&x, &o), 0); /* the stack is no file's */

  char path[512];
  snprintf(path, sizeof path, "%s/rdc_multi.so", FIXTURE_DIR);
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL); /* registers, calls no driver */
  assert_non_null(h);
  void *anchor = dlsym(h, "fx_rdc_anchor");
  assert_non_null(anchor);
  assert_int_equal(dm_elf_origin(anchor, &o), 1);
  assert_string_equal(o.path, path);
  int fd = open(path, O_RDONLY);
  dm_elf_cuda_secs_t s;
  char why[300];
  assert_int_equal(dm_elf_cuda_sections(fd, &s, why, sizeof why), 0);
  close(fd);
  assert_true(s.fatbin.alloc && s.relfatbin.alloc);
  const void *image = (const void *)(o.bias + s.fatbin.addr), *sec;
  size_t len;
  char file[512];
  assert_int_equal(dm_relfatbin_of(image, &sec, &len, file, sizeof file, why, sizeof why), 1);
  assert_int_equal(len, s.relfatbin.size);
  assert_string_equal(file, path);
  dm_rel_plan_t p;
  assert_int_equal(dm_rel_plan(sec, len, 90, &p, why, sizeof why), 0);
  assert_int_equal(p.nsass, 2);
  dm_rel_plan_free(&p);
  /* an address of the library outside its .nv_fatbin */
  assert_int_equal(dm_relfatbin_of(anchor, &sec, &len, file, sizeof file, why, sizeof why), 0);
  assert_non_null(strstr(why, "not in its .nv_fatbin"));
  /* a program without relocatable code */
  assert_int_equal(dm_relfatbin_of((const void *)test_origin, &sec, &len, file, sizeof file, why, sizeof why),
                   0);
  dlclose(h);
}

static void test_devrt_names(void **state) {
  (void)state;
  assert_true(dm_is_devrt_symbol("__cudaCDP2LaunchDeviceV2"));
  assert_true(dm_is_devrt_symbol("__cudaCDP2GetParameterBufferV2"));
  assert_true(dm_is_devrt_symbol("cudaGetParameterBuffer"));
  assert_true(dm_is_devrt_symbol("cudaLaunchDeviceV2"));
  assert_false(dm_is_devrt_symbol("malloc"));
  assert_false(dm_is_devrt_symbol("cuda"));
  assert_false(dm_is_devrt_symbol("cudax_helper"));
  assert_false(dm_is_devrt_symbol("__cuda_syscall_aligned_malloc"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_two_units),         cmocka_unit_test(test_devrt),
      cmocka_unit_test(test_lto_and_ptx_units), cmocka_unit_test(test_covers),
      cmocka_unit_test(test_damaged),           cmocka_unit_test(test_origin),
      cmocka_unit_test(test_devrt_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
