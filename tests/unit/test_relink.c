/*
 * test_relink.c — dm_relink_image()/dm_relink_file() end to end against a
 * fake Driver API (installed with dm_jit_set_resolver; no GPU): which PTX is
 * chosen for the device, that devmalloc's PTX is the second link input, the
 * cache hit on the second load (also across compression modes of the same
 * PTX), and every fallback (no PTX, no malloc, already devmalloc, corrupt
 * fatbin, failed link, no context) returning 0 with a reason.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <cuda.h>
#include "fatbin.h"
#include "jit_link.h"
#include "relink.h"
#include "sha256.h"
#include "relink_test_util.h"
#include "fake_link.h"

/* ---- fake driver ---- */
static char fake_first_target[32];
static char fake_second_target[32]; /* devmalloc's PTX as linked */
static char fake_input_names[2][32];
static unsigned fake_input_maxreg[2]; /* CU_JIT_MAX_REGISTERS per input, 0: none */

#define f_link_create fake_link_create
static CUresult f_link_add(CUlinkState ls, CUjitInputType t, void *data, size_t size, const char *name,
                           unsigned n, CUjit_option *o, void **v) {
  fake_state_t *s = (fake_state_t *)ls;
  if (s->n < 2) {
    fake_input_maxreg[s->n] = 0;
    for (unsigned i = 0; i < n; i++)
      if (o[i] == CU_JIT_MAX_REGISTERS) fake_input_maxreg[s->n] = (unsigned)(uintptr_t)v[i];
  }
  assert_int_equal(t, CU_JIT_INPUT_PTX);
  assert_int_equal(((char *)data)[size - 1], 0); /* NUL counted in size */
  if (s->n < 2) snprintf(fake_input_names[s->n], sizeof fake_input_names[0], "%s", name);
  if (s->n == 0) {
    const char *t = strstr(data, ".target ");
    snprintf(fake_first_target, sizeof fake_first_target, "%.*s", t ? 13 : 0, t ? t : "");
    fake_first_target[strcspn(fake_first_target, "\n")] = 0;
  } else if (s->n == 1) {
    const char *t = strstr(data, ".target ");
    snprintf(fake_second_target, sizeof fake_second_target, "%.*s", t ? 13 : 0, t ? t : "");
    fake_second_target[strcspn(fake_second_target, "\n")] = 0;
  }
  fake_link_append(s, data, size);
  return CUDA_SUCCESS;
}
#include "fake_jit.h"

static char cache_root[DM_FX_ROOT];

static int setup(void **state) {
  (void)state;
  if (fx_scratch_make(cache_root, "/tmp/dm-relink-test-XXXXXX")) return -1;
  setenv("DEVMALLOC_JIT_SASS", "0", 1); /* devmalloc's PTX: test_relink_rdc.c has its SASS */
  dm_jit_set_resolver(fake_resolve);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return fx_scratch_remove(cache_root);
}

static void test_relink_and_cache(void **state) {
  (void)state;
  const void *out;
  size_t sz;
  char why[300];
  int links0 = fake_links;
  assert_int_equal(relink_fx("malloc_default.fatbin", &out, &sz, why, sizeof why), 1);
  assert_int_equal(fake_links, links0 + 1);
  assert_string_equal(fake_input_names[0], "app.ptx");
  assert_string_equal(fake_input_names[1], "devmalloc.ptx");
  /* devmalloc's PTX is capped like the device library; the app's is not */
  assert_int_equal(fake_input_maxreg[0], 0);
  assert_int_equal(fake_input_maxreg[1], DM_DEVICE_MAXRREG);
  assert_string_equal(fake_first_target, ".target sm_90");
  /* devmalloc's PTX is linked at the application's target (CUB checks the
     * image's PTX version) */
  assert_string_equal(fake_second_target, ".target sm_90");
  /* the fake "cubin" is the inputs: app PTX then devmalloc's (which defines malloc) */
  assert_non_null(memmem(out, sz, "__cuda_syscall_aligned_malloc", 29));
  assert_non_null(memmem(out, sz, ".visible .func", 14));
  dm_relink_free(out);
  /* second load: from the cache, no JIT */
  assert_int_equal(relink_fx("malloc_default.fatbin", &out, &sz, why, sizeof why), 1);
  assert_int_equal(fake_links, links0 + 1);
  dm_relink_free(out);
  /* same PTX, stored uncompressed / LZ4: same key */
  assert_int_equal(relink_fx("malloc_nocomp.fatbin", &out, &sz, why, sizeof why), 1);
  dm_relink_free(out);
  assert_int_equal(relink_fx("malloc_lz4_all.fatbin", &out, &sz, why, sizeof why), 1);
  dm_relink_free(out);
  assert_int_equal(fake_links, links0 + 1);
  /* through a registration wrapper, as cuLibraryLoadData gets it */
  size_t len;
  unsigned char *b = fx_read("malloc_zstd_all.fatbin", &len);
  struct {
    uint32_t m, v;
    const void *p, *q;
  } w = {DM_FATBIN_WRAPPER_MAGIC, 1, b, NULL};
  assert_int_equal(dm_relink_image(&w, &out, &sz, why, sizeof why), 1);
  dm_relink_free(out);
  free(b);
  /* PTX-only fatbin, from a file */
  char path[512];
  snprintf(path, sizeof path, "%s/malloc_ptx.fatbin", FIXTURE_DIR);
  assert_int_equal(dm_relink_file(path, &out, &sz, why, sizeof why), 1);
  dm_relink_free(out);
  assert_int_equal(fake_links, links0 + 1);
}

/* The digest of devmalloc's PTX that the build embeds (mk/interpose_image_relink.mk, the
 * cache key's part) is the digest of the PTX the shim embeds. */
extern const char dm_devmalloc_ptx[];
extern const unsigned char dm_devmalloc_ptx_sha256[32];
static void test_embedded_ptx_digest(void **state) {
  (void)state;
  uint8_t h[32];
  size_t n = strlen(dm_devmalloc_ptx);
  assert_true(n > 1000);
  dm_sha256(dm_devmalloc_ptx, n, h);
  assert_memory_equal(h, dm_devmalloc_ptx_sha256, 32);
}

static void test_pick_arch(void **state) {
  (void)state;
  const void *out;
  size_t sz;
  char why[300];
  fake_cc_major = 8;
  fake_cc_minor = 6; /* compute_75 is the best <= 86 */
  assert_int_equal(relink_fx("malloc_multi.fatbin", &out, &sz, why, sizeof why), 1);
  assert_string_equal(fake_first_target, ".target sm_75");
  assert_string_equal(fake_second_target, ".target sm_80"); /* below its own: as built */
  dm_relink_free(out);
  fake_cc_major = 10;
  fake_cc_minor = 0;
  assert_int_equal(relink_fx("malloc_multi.fatbin", &out, &sz, why, sizeof why), 1);
  assert_string_equal(fake_first_target, ".target sm_90");
  dm_relink_free(out);
  fake_cc_major = 7;
  fake_cc_minor = 0;
  assert_int_equal(relink_fx("malloc_multi.fatbin", &out, &sz, why, sizeof why), 0);
  assert_non_null(strstr(why, "no PTX for sm_70"));
  fake_cc_major = 9;
}

static void expect_refusal(const char *file, const char *reason) {
  const void *out = NULL;
  size_t sz;
  char why[300];
  int links0 = fake_links;
  assert_int_equal(relink_fx(file, &out, &sz, why, sizeof why), 0);
  assert_null(out);
  if (!strstr(why, reason)) fail_msg("%s: reason \"%s\" lacks \"%s\"", file, why, reason);
  assert_int_equal(fake_links, links0);
}

static void test_fallbacks(void **state) {
  (void)state;
  expect_refusal("plain_default.fatbin", "does not call device malloc");
  expect_refusal("malloc_elf.fatbin", "no PTX in the fatbin");
  expect_refusal("malloc.cubin", "carries no PTX");
  expect_refusal("plain.cubin", "does not call");
  expect_refusal("devmalloc_rdc.cubin", "already linked with devmalloc");
  expect_refusal("stub_devmalloc.ptx", "already linked with devmalloc");
  /* corrupt: bad entry header, and a PTX whose zstd data is damaged */
  size_t len;
  unsigned char *b = fx_read("malloc_default.fatbin", &len);
  const void *out;
  size_t sz;
  char why[300];
  unsigned char *t = fx_copy(b, len);
  t[16 + 4] = 3; /* first entry header size */
  assert_int_equal(dm_relink_image(t, &out, &sz, why, sizeof why), 0);
  assert_non_null(strstr(why, "corrupt fatbin"));
  free(t);
  dm_fatbin_t fb;
  assert_int_equal(dm_fatbin_open(b, len, &fb, NULL, 0), 0);
  size_t cur = 0;
  dm_fb_entry_t e;
  while (dm_fatbin_next(&fb, &cur, &e, NULL, 0) == 1 && e.kind != DM_FB_KIND_PTX)
    ;
  t = fx_copy(b, len);
  t[(e.payload - b) + 1] ^= 0x5a; /* zstd frame magic */
  assert_int_equal(dm_relink_image(t, &out, &sz, why, sizeof why), 0);
  assert_non_null(strstr(why, "zstd"));
  free(t);
  /* unknown image */
  assert_int_equal(dm_relink_image("\x01\x02\x03\x04xxxx", &out, &sz, why, sizeof why), 0);
  assert_non_null(strstr(why, "unknown image"));
  /* link failure: the original is kept */
  fake_fail_link = 1;
  char ptx[] = ".version 9.0\n.target sm_90\n.address_size 64\n"
               ".extern .func (.param .b64 func_retval0) malloc (.param .b64 n);\n";
  assert_int_equal(dm_relink_image(ptx, &out, &sz, why, sizeof why), 0);
  assert_non_null(strstr(why, "cuLinkComplete"));
  fake_fail_link = 0;
  /* no current context (a runtime loading before any context exists): the
     * link runs in device 0's primary context, pushed and popped around it */
  fake_no_ctx = 1;
  int pushes = fake_pushes, releases = fake_releases;
  assert_int_equal(dm_relink_image(ptx, &out, &sz, why, sizeof why), 1);
  dm_relink_free(out);
  assert_int_equal(fake_pushes, pushes + 1);
  assert_int_equal(fake_pops, fake_pushes);
  assert_int_equal(fake_releases, releases); /* kept for the runtime */
  /* a cache hit needs no context: nothing is pushed (no primary context
     * could be had here) */
  fake_no_primary = 1;
  pushes = fake_pushes;
  assert_int_equal(dm_relink_image(ptx, &out, &sz, why, sizeof why), 1);
  dm_relink_free(out);
  assert_int_equal(fake_pushes, pushes);
  fake_no_primary = 0;
  fake_no_ctx = 0;
  /* now the PTX text links */
  assert_int_equal(dm_relink_image(ptx, &out, &sz, why, sizeof why), 1);
  dm_relink_free(out);
  free(b);
}

/* DEVMALLOC_CACHE_DIR values that are no usable absolute path: in a child
 * (options are read once per process), from an empty working directory. The
 * cache is off and nothing is created where the application runs. */
static int cache_dir_value_creates(const char *value) {
  char cwd[300];
  snprintf(cwd, sizeof cwd, "%s/cwd-XXXXXX", cache_root);
  assert_non_null(mkdtemp(cwd));
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    if (chdir(cwd) != 0) _exit(2);
    setenv("DEVMALLOC_CACHE_DIR", value, 1);
    const void *out = NULL;
    size_t sz;
    char why[300];
    dm_relink_image(".version 9.0\n.target sm_90\n", &out, &sz, why, sizeof why);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s')\"", cwd);
    _exit(system(cmd) == 0 ? 0 : 1);
  }
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st));
  return WEXITSTATUS(st);
}

static void test_cache_dir_values(void **state) {
  (void)state;
  assert_int_equal(cache_dir_value_creates("off "), 0);
  assert_int_equal(cache_dir_value_creates(" OFF\t"), 0);
  assert_int_equal(cache_dir_value_creates("relative/cache"), 0);
  assert_int_equal(cache_dir_value_creates("  "), 0);
}

/* Files that are not module images: refused without reading them through,
 * and without blocking on a FIFO. */
static void test_odd_files(void **state) {
  (void)state;
  const void *out = NULL;
  size_t sz;
  char why[300];
  assert_int_equal(dm_relink_file("/dev/zero", &out, &sz, why, sizeof why), 0);
  assert_non_null(strstr(why, "not a regular file"));
  char dir[] = "/tmp/dm_relink_XXXXXX", path[600];
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/fifo", dir);
  assert_int_equal(mkfifo(path, 0600), 0);
  alarm(20);
  assert_int_equal(dm_relink_file(path, &out, &sz, why, sizeof why), 0);
  alarm(0);
  assert_non_null(strstr(why, "not a regular file"));
  unlink(path);
  snprintf(path, sizeof path, "%s/zeros", dir); /* a big file of no format */
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  assert_int_equal(ftruncate(fileno(f), 64 << 20), 0);
  fclose(f);
  assert_int_equal(dm_relink_file(path, &out, &sz, why, sizeof why), 0);
  assert_non_null(strstr(why, "unknown image format"));
  unlink(path);
  assert_int_equal(dm_relink_file(dir, &out, &sz, why, sizeof why), 0);
  assert_non_null(strstr(why, "not a regular file"));
  rmdir(dir);
  assert_null(out);
}

/* The shim's path: an image delimited by the caller. */
static void test_sized(void **state) {
  (void)state;
  const void *out = NULL;
  size_t len, sz;
  char why[300];
  unsigned char *b = fx_read("malloc_default.fatbin", &len);
  assert_int_equal(dm_relink_sized(b, b, len, &out, &sz, why, sizeof why), 1);
  dm_relink_free(out);
  /* a size shorter than the fatbin declares is corrupt, not read past */
  assert_int_equal(dm_relink_sized(b, b, len / 2, &out, &sz, why, sizeof why), 0);
  assert_non_null(strstr(why, "corrupt fatbin"));
  assert_int_equal(dm_relink_sized(b, NULL, 0, &out, &sz, why, sizeof why), 0);
  free(b);
}

/* Read ahead (the shim's thread while the first context is created): a
 * cache hit is kept for the load of that fatbin for the same target and
 * handed over once; a miss links nothing; a load for another target, or
 * after the image was taken, reads the cache itself. */
static void test_read_ahead(void **state) {
  (void)state;
  const void *ref, *out;
  size_t len, rsz, sz;
  char why[300], cmd[400];
  unsigned char *b = fx_read("malloc_default.fatbin", &len);
  assert_int_equal(dm_relink_sized(b, b, len, &ref, &rsz, why, sizeof why), 1); /* cached */
  int links0 = fake_links;
  assert_int_equal(dm_relink_read_ahead(b, len, 0, why, sizeof why), 1);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'/cache/*", cache_root); /* the cache forgets it */
  assert_int_equal(system(cmd), 0);
  assert_int_equal(dm_relink_sized(b, b, len, &out, &sz, why, sizeof why), 1);
  assert_int_equal(fake_links, links0); /* the image kept, not a link */
  assert_int_equal(sz, rsz);
  assert_memory_equal(out, ref, sz);
  dm_relink_free(out);
  assert_int_equal(dm_relink_sized(b, b, len, &out, &sz, why, sizeof why), 1);
  assert_int_equal(fake_links, links0 + 1); /* taken once: the load linked (and cached) */
  dm_relink_free(out);
  /* kept for compute capability 9.0; a load for 10.0 does not take it */
  assert_int_equal(dm_relink_read_ahead(b, len, 0, why, sizeof why), 1);
  fake_cc_major = 10;
  assert_int_equal(dm_relink_sized(b, b, len, &out, &sz, why, sizeof why), 1);
  assert_int_equal(fake_links, links0 + 2);
  dm_relink_free(out);
  fake_cc_major = 9;
  assert_int_equal(dm_relink_sized(b, b, len, &out, &sz, why, sizeof why), 1);
  assert_int_equal(fake_links, links0 + 2);
  dm_relink_free(out);
  /* not in the cache (8.9 picks the compute_75 PTX): nothing linked ahead */
  size_t mlen;
  unsigned char *m = fx_read("malloc_multi.fatbin", &mlen);
  fake_cc_major = 8;
  fake_cc_minor = 9;
  assert_int_equal(dm_relink_read_ahead(m, mlen, 0, why, sizeof why), 0);
  assert_non_null(strstr(why, "not in the cache"));
  assert_int_equal(fake_links, links0 + 2);
  fake_cc_major = 9;
  fake_cc_minor = 0;
  /* a module without malloc is not read ahead */
  size_t plen;
  unsigned char *p = fx_read("plain_default.fatbin", &plen);
  assert_int_equal(dm_relink_read_ahead(p, plen, 0, why, sizeof why), 0);
  assert_non_null(strstr(why, "does not call device malloc"));
  dm_relink_free(ref);
  free(p);
  free(m);
  free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cache_dir_values), /* first: before options are read */
      cmocka_unit_test(test_relink_and_cache), cmocka_unit_test(test_embedded_ptx_digest),
      cmocka_unit_test(test_pick_arch),        cmocka_unit_test(test_fallbacks),
      cmocka_unit_test(test_odd_files),        cmocka_unit_test(test_sized),
      cmocka_unit_test(test_read_ahead), /* last: it empties the cache */
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
