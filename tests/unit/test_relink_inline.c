/*
 * test_relink_inline.c — the re-link with DEVMALLOC_JIT_INLINE=1 against a
 * fake Driver API (no GPU): the application's PTX reaches the link with
 * free's common path written into its calls, the result is cached and taken
 * from the cache; when the link of the rewritten text fails, the module is
 * linked once more with its calls as they were, and still re-linked.
 * Built a second time with DM_UNDER_TOOL (test_relink_inline_tool): with a
 * CUDA tool named in CUDA_INJECTION64_PATH the option is not applied and the
 * calls are linked as they are; and a third with DM_TOOL_LIB, the path of a
 * library named as a tool's injection library (test_relink_inline_toollib):
 * that library loaded, likewise.
 */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <cmocka.h>
#include <cuda.h>
#include "jit_link.h"
#include "relink.h"
#include "relink_test_util.h"
#include "fake_link.h"

#define INLINED "devmalloc: free inlined"

/* ---- fake driver: the application's input kept; a link of a rewritten
 * text fails while fail_inlined is set ---- */
static int fail_inlined, app_inlined;

#define f_link_create fake_link_create
static CUresult f_link_add(CUlinkState ls, CUjitInputType t, void *data, size_t size, const char *name,
                           unsigned n, CUjit_option *o, void **v) {
  (void)t;
  (void)n;
  (void)o;
  (void)v;
  fake_state_t *s = (fake_state_t *)ls;
  if (s->n == 0) {
    assert_string_equal(name, "app.ptx");
    app_inlined = memmem(data, size, INLINED, strlen(INLINED)) != NULL;
    if (app_inlined && fail_inlined) return CUDA_ERROR_INVALID_PTX;
  }
  fake_link_append(s, data, size);
  return CUDA_SUCCESS;
}
#include "fake_jit.h"

static char root[DM_FX_ROOT];

static int setup(void **state) {
  (void)state;
  if (fx_scratch_make(root, "/tmp/dm-relink-inline-XXXXXX")) return -1;
  setenv("DEVMALLOC_JIT_INLINE", "1", 1); /* before the options are read */
  setenv("DEVMALLOC_JIT_SASS", "0", 1);
  unsetenv("CUDA_INJECTION64_PATH");
#if defined(DM_TOOL_LIB)
  if (!dlopen(DM_TOOL_LIB, RTLD_NOW)) return -1; /* a tool's library, loaded as the driver would */
#elif defined(DM_UNDER_TOOL)
  setenv("CUDA_INJECTION64_PATH", "/opt/tool/libcuda-injection.so", 1);
#endif
  dm_jit_set_resolver(fake_resolve);
  return 0;
}
static int teardown(void **state) {
  (void)state;
  return fx_scratch_remove(root);
}

/* One re-link of the fixture: `links` more links of the fake driver (0: a
 * cache hit), the application's text reached the link inlined or not, and
 * the image holds the inlined text or not. */
static void relink_expect(int links, int app_was_inlined, int image_inlined) {
  const void *out;
  size_t sz;
  char why[300];
  int links0 = fake_links;
  app_inlined = 0;
  assert_int_equal(relink_fx("malloc_default.fatbin", &out, &sz, why, sizeof why), 1);
  assert_int_equal(fake_links, links0 + links);
  assert_int_equal(app_inlined, app_was_inlined);
  assert_int_equal(memmem(out, sz, INLINED, strlen(INLINED)) != NULL, image_inlined);
  dm_relink_free(out);
}

#if !defined(DM_UNDER_TOOL) && !defined(DM_TOOL_LIB)
static void test_calls_inlined_and_cached(void **state) {
  (void)state;
  relink_expect(1, 1, 1);
  relink_expect(0, 0, 1); /* the cache's */
}

/* A rewritten text the link refuses: linked again with the calls (the
 * cache emptied first). */
static void test_failed_link_falls_back_to_calls(void **state) {
  (void)state;
  char cmd[DM_FX_ROOT + 32];
  snprintf(cmd, sizeof cmd, "rm -f '%s'/cache/*.cubin", root);
  assert_int_equal(system(cmd), 0);
  fail_inlined = 1;
  relink_expect(1, 0, 0);
  fail_inlined = 0;
}

#else
/* Under a CUDA tool: the calls linked as they are. */
static void test_tool_links_calls(void **state) {
  (void)state;
  relink_expect(1, 0, 0);
}

#endif

int main(void) {
  const struct CMUnitTest tests[] = {
#if defined(DM_UNDER_TOOL) || defined(DM_TOOL_LIB)
    cmocka_unit_test(test_tool_links_calls),
#else
    cmocka_unit_test(test_calls_inlined_and_cached),
    cmocka_unit_test(test_failed_link_falls_back_to_calls),
#endif
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
