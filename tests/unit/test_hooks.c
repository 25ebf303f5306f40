/*
 * test_hooks.c — the hook table (hooks.def) against the stub libcuda of the
 * toolkit: every listed symbol resolvable, _ptsz/_ptds and versioned
 * variants kept distinct, cuGetProcAddress answers (exact pointer match and
 * the name fallback), and the dlsym interposition (hooked names answered
 * with our wrappers, others and RTLD_NEXT exactly as glibc would).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <dlfcn.h>
#include <cmocka.h>

#include "shim_fake.h"

static void *stub(void) {
  static void *h;
  if (!h) h = dlopen(CUDA_STUB_LIB, RTLD_LAZY | RTLD_LOCAL);
  assert_non_null(h);
  return h;
}

static void *stub_sym(const char *s) { return dm_real_dlsym(stub(), s); }

static void t_all_resolvable(void **st) {
  assert_true(DM_NUM_HOOKS >= 30);
  for (int i = 0; i < DM_NUM_HOOKS; i++) {
    if (!stub_sym(dm_hooks[i].sym)) fail_msg("%s not in %s", dm_hooks[i].sym, CUDA_STUB_LIB);
    assert_int_equal(dm_hook_by_sym(dm_hooks[i].sym), i);
    assert_int_equal(dm_hook_by_ptr(dm_hooks[i].hook), i);
    assert_non_null(dm_hooks[i].hook);
  }
  for (size_t a = 0; a < dm_num_aliases; a++) assert_true(dm_aliases[a].id >= 0);
  assert_int_equal(dm_hook_by_sym("cuMemcpy"), -1);
  assert_int_equal(dm_hook_by_sym("malloc"), -1);
}

static void t_ptsz_distinct(void **st) {
  int nptds = 0;
  for (int i = 0; i < DM_NUM_HOOKS; i++) {
    for (int j = 0; j < DM_NUM_HOOKS; j++)
      if (i != j) {
        assert_string_not_equal(dm_hooks[i].sym, dm_hooks[j].sym);
        assert_ptr_not_equal(dm_hooks[i].hook, dm_hooks[j].hook);
      }
    if (!dm_hooks[i].ptds) continue;
    nptds++;
    assert_non_null(strstr(dm_hooks[i].sym, "_pt"));
    /* its legacy twin exists, with another driver function */
    int twin = -1;
    for (int j = 0; j < DM_NUM_HOOKS; j++)
      if (!dm_hooks[j].ptds && !strcmp(dm_hooks[j].base, dm_hooks[i].base)) twin = j;
    assert_true(twin >= 0);
    assert_ptr_not_equal(stub_sym(dm_hooks[i].sym), stub_sym(dm_hooks[twin].sym));
  }
  assert_int_equal(nptds, 6); /* 3 launches, instantiate, graph launch, stream sync */
}

static void t_answer_by_pointer(void **st) {
  dm_driver_set_library(CUDA_STUB_LIB); /* dm_real() resolves from the stub */
  const uint64_t PT = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  void *lk = stub_sym("cuLaunchKernel"), *lkp = stub_sym("cuLaunchKernel_ptsz");
  assert_ptr_equal(dm_hook_answer("cuLaunchKernel", lk, 13000, 0), dm_hooks[DM_ID_cuLaunchKernel].hook);
  assert_ptr_equal(dm_hook_answer("cuLaunchKernel", lkp, 13000, PT),
                   dm_hooks[DM_ID_cuLaunchKernel_ptsz].hook);
  /* the query for cuGetProcAddress itself */
  assert_ptr_equal(dm_hook_answer("cuGetProcAddress", stub_sym("cuGetProcAddress_v2"), 13000, 0),
                   dm_hooks[DM_ID_cuGetProcAddress_v2].hook);
  assert_ptr_equal(dm_hook_answer("cuGetProcAddress", stub_sym("cuGetProcAddress"), 11030, 0),
                   dm_hooks[DM_ID_cuGetProcAddress].hook);
  assert_ptr_equal(dm_hook_answer("cuMemAlloc", stub_sym("cuMemAlloc_v2"), 13000, 0),
                   dm_hooks[DM_ID_cuMemAlloc_v2].hook);
  /* both device synchronizations: without arguments (runtimes before 13) and _v2 */
  assert_ptr_equal(dm_hook_answer("cuCtxSynchronize", stub_sym("cuCtxSynchronize"), 12000, 0),
                   dm_hooks[DM_ID_cuCtxSynchronize].hook);
  assert_ptr_equal(dm_hook_answer("cuCtxSynchronize", stub_sym("cuCtxSynchronize_v2"), 13000, 0),
                   dm_hooks[DM_ID_cuCtxSynchronize_v2].hook);
  /* versions we do not hook, and other functions, are left alone */
  void *v1 = stub_sym("cuMemAlloc");
  assert_ptr_equal(dm_hook_answer("cuMemAlloc", v1, 3000, 0), v1);
  void *cp = stub_sym("cuMemcpy");
  assert_ptr_equal(dm_hook_answer("cuMemcpy", cp, 13000, 0), cp);
  /* our own wrapper is never wrapped twice */
  void *ours = dm_hooks[DM_ID_cuLaunchKernel].hook;
  assert_ptr_equal(dm_hook_answer("cuLaunchKernel", ours, 13000, 0), ours);
  assert_ptr_equal(dm_real(DM_ID_cuLaunchKernel_ptsz), lkp);
}

static void t_answer_by_name(void **st) {
  const uint64_t PT = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  assert_int_equal(dm_hook_by_base("cuLaunchKernel", 13000, 0), DM_ID_cuLaunchKernel);
  assert_int_equal(dm_hook_by_base("cuLaunchKernel", 13000, PT), DM_ID_cuLaunchKernel_ptsz);
  assert_int_equal(dm_hook_by_base("cuGraphLaunch", 12000, PT), DM_ID_cuGraphLaunch_ptsz);
  assert_int_equal(dm_hook_by_base("cuMemAlloc", 13000, PT), DM_ID_cuMemAlloc_v2);
  assert_int_equal(dm_hook_by_base("cuMemAlloc", 3000, 0), -1);
  assert_int_equal(dm_hook_by_base("cuGraphInstantiate", 12000, 0), DM_ID_cuGraphInstantiateWithFlags);
  assert_int_equal(dm_hook_by_base("cuGraphInstantiate", 11000, 0), DM_ID_cuGraphInstantiate_v2);
  assert_int_equal(dm_hook_by_base("cuGraphInstantiate", 10000, 0), DM_ID_cuGraphInstantiate);
  assert_int_equal(dm_hook_by_base("cuGetProcAddress", 12000, 0), DM_ID_cuGetProcAddress_v2);
  assert_int_equal(dm_hook_by_base("cuGetProcAddress", 11030, 0), DM_ID_cuGetProcAddress);
  assert_int_equal(dm_hook_by_base("cuDevicePrimaryCtxReset", 13000, 0), DM_ID_cuDevicePrimaryCtxReset_v2);
  assert_int_equal(dm_hook_by_base("cuCtxSynchronize", 12080, 0), DM_ID_cuCtxSynchronize);
  assert_int_equal(dm_hook_by_base("cuCtxSynchronize", 13000, 0), DM_ID_cuCtxSynchronize_v2);
  assert_int_equal(dm_hook_by_base("cuMemcpy", 13000, 0), -1);
}

static void t_dlsym(void **st) {
  void *h = stub();
  /* hooked: our wrapper, and the stub's function recorded as the real one */
  void *p = dlsym(h, "cuLibraryLoadData");
  assert_ptr_equal(p, dm_hooks[DM_ID_cuLibraryLoadData].hook);
  assert_ptr_equal(dm_real(DM_ID_cuLibraryLoadData), stub_sym("cuLibraryLoadData"));
  assert_ptr_equal(dlsym(h, "cuGetProcAddress_v2"), dm_hooks[DM_ID_cuGetProcAddress_v2].hook);
  assert_ptr_equal(dlsym(h, "cuLaunchKernel_ptsz"), dm_hooks[DM_ID_cuLaunchKernel_ptsz].hook);
  /* not hooked: unchanged */
  assert_ptr_equal(dlsym(h, "cuMemcpy"), stub_sym("cuMemcpy"));
  assert_null(dlsym(h, "cuNoSuchFunction"));
  /* RTLD_NEXT from this executable: libc's, as glibc answers */
  void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  assert_non_null(libc);
  assert_ptr_equal(dlsym(RTLD_NEXT, "strlen"), dm_real_dlsym(libc, "strlen"));
  assert_ptr_equal(dlsym(RTLD_DEFAULT, "dlopen"), dm_real_dlsym(RTLD_DEFAULT, "dlopen"));
  assert_null(dlsym(RTLD_NEXT, "no_such_symbol_anywhere"));
}

/* "cu" names with RTLD_NEXT / RTLD_DEFAULT: the caller-relative search runs
 * over the loaded objects (the stub, loaded RTLD_GLOBAL, comes after this
 * executable) and hooked names are still answered with our wrappers. */
static void t_dlsym_cu_scopes(void **st) {
  void *g = dlopen(CUDA_STUB_LIB, RTLD_LAZY | RTLD_GLOBAL);
  assert_non_null(g);
  assert_ptr_equal(dlsym(RTLD_NEXT, "cuMemcpy"), stub_sym("cuMemcpy"));
  assert_ptr_equal(dlsym(RTLD_DEFAULT, "cuMemcpy"), stub_sym("cuMemcpy"));
  assert_ptr_equal(dlsym(RTLD_NEXT, "cuGetProcAddress_v2"), dm_hooks[DM_ID_cuGetProcAddress_v2].hook);
  assert_null(dlsym(RTLD_NEXT, "cuNoSuchFunction"));
  assert_null(dlsym(RTLD_NEXT, "c"));
  assert_null(dlsym(RTLD_NEXT, "cu"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_all_resolvable),
      cmocka_unit_test(t_ptsz_distinct),
      cmocka_unit_test(t_answer_by_pointer),
      cmocka_unit_test(t_answer_by_name),
      cmocka_unit_test(t_dlsym),
      cmocka_unit_test(t_dlsym_cu_scopes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
