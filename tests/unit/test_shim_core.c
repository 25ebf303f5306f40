/*
 * test_shim_core.c — the shim's logic without a GPU: the heap-size limit
 * state machine, the context -> heap table (one heap per context, sizes,
 * failures, teardown), the launch cache and owner records, the image scan
 * (synthetic images and the cubins the build produces), and the launch path
 * against a fake driver (bound once, modules without devmalloc untouched,
 * capture deferred, concurrent first launches create one heap), and the
 * first primary retain reading the program's fatbins ahead.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>

#define FK_RELINK_READ_AHEAD fk_read_ahead
#include "shim_fake.h"

#define CTX_A ((CUcontext)0x1000)
#define CTX_B ((CUcontext)0x2000)

/* ---- limit.c ---- */
static void t_limit(void **st) {
  dm_limit_t l = {0};
  dm_opt_size_t unset = {DM_SIZE_UNSET, 0, 0}, env = {DM_SIZE_BYTES, 96ull << 20, 0},
                frac = {DM_SIZE_FRACTION, 0, 0.5};
  assert_int_equal(dm_limit_report(&l, &unset, 0, 0), 0); /* stock value */
  assert_int_equal(dm_limit_report(&l, &unset, 0, 1), DM_DEFAULT_HEAP_BYTES);
  assert_int_equal(dm_limit_heap_bytes(&l, &unset, 0), DM_DEFAULT_HEAP_BYTES);
  assert_int_equal(dm_limit_set(&l, 64u << 20), DM_LIMIT_RECORD);
  assert_int_equal(dm_limit_report(&l, &unset, 0, 0), 64u << 20);
  assert_int_equal(dm_limit_set(&l, 32u << 20), DM_LIMIT_RECORD); /* last one wins */
  assert_int_equal(dm_limit_heap_bytes(&l, &unset, 0), 32u << 20);
  assert_int_equal(dm_limit_heap_bytes(&l, &env, 0), 96u << 20); /* env overrides */
  assert_int_equal(dm_limit_heap_bytes(&l, &frac, 1ull << 30), 512u << 20);
  l.heap_created = 1;
  l.heap_bytes = 32u << 20;
  assert_int_equal(dm_limit_set(&l, 32u << 20), DM_LIMIT_NOOP);
  assert_int_equal(dm_limit_set(&l, 64u << 20), DM_LIMIT_RESIZE); /* nothing bound yet */
  assert_false(l.heap_created);
  assert_int_equal(dm_limit_heap_bytes(&l, &unset, 0), 64u << 20);
  l.heap_created = l.heap_bound = 1;
  l.heap_bytes = 32u << 20;
  assert_int_equal(dm_limit_set(&l, 64u << 20), DM_LIMIT_REJECT); /* a kernel may use it */
  assert_int_equal(dm_limit_report(&l, &env, 0, 0), 32u << 20);   /* the real heap */
  dm_limit_t tiny = {.app_set = 1, .app_value = 4096};
  assert_int_equal(dm_limit_heap_bytes(&tiny, &unset, 0), DM_MIN_HEAP_BYTES);
  /* a heap that grows: maximum from the option, else the application's limit
   * (when it is the maximum), else 0; initial never above the maximum, both
   * at least the floor */
  size_t mx, in;
  dm_limit_t none = {0}, app = {.app_set = 1, .app_value = 48u << 20};
  dm_limit_grow_bytes(&none, &unset, 0, 64u << 20, 1, &mx, &in);
  assert_int_equal(mx, 0);
  assert_int_equal(in, 64u << 20);
  dm_limit_grow_bytes(&app, &unset, 0, 64u << 20, 1, &mx, &in);
  assert_int_equal(mx, 48u << 20); /* the limit is the maximum */
  assert_int_equal(in, 48u << 20); /* the initial size is capped to it */
  dm_limit_grow_bytes(&app, &env, 0, 64u << 20, 1, &mx, &in);
  assert_int_equal(mx, 96u << 20); /* DEVMALLOC_HEAP_SIZE wins */
  assert_int_equal(in, 64u << 20);
  dm_limit_grow_bytes(&app, &unset, 0, 64u << 20, 0, &mx, &in);
  assert_int_equal(mx, 0); /* DEVMALLOC_LIMIT_IS_MAX=0: the limit is where it starts */
  assert_int_equal(in, 48u << 20);
  dm_limit_grow_bytes(&tiny, &unset, 0, 4096, 1, &mx, &in);
  assert_int_equal(mx, DM_MIN_HEAP_BYTES);
  assert_int_equal(in, DM_MIN_HEAP_BYTES);
  /* a heap that grows: any value up to its maximum is a statement of need */
  dm_limit_t g = {.app_set = 1,
                  .app_value = 32u << 20,
                  .heap_created = 1,
                  .heap_bound = 1,
                  .heap_bytes = 32u << 20,
                  .grows = 1,
                  .max_bytes = 8ull << 30};
  assert_int_equal(dm_limit_set(&g, 32u << 20), DM_LIMIT_NOOP);
  assert_int_equal(dm_limit_set(&g, 4ull << 30), DM_LIMIT_NOOP);
  assert_int_equal(dm_limit_set(&g, 8ull << 30), DM_LIMIT_NOOP);
  assert_int_equal(dm_limit_set(&g, (8ull << 30) + 1), DM_LIMIT_REJECT); /* bound: fixed */
  assert_int_equal(dm_limit_report(&g, &env, 0, 0), 8ull << 30);         /* its maximum */
  g.heap_bound = 0;                                                      /* no kernel yet: */
  assert_int_equal(dm_limit_set(&g, (8ull << 30) + 1), DM_LIMIT_RESIZE); /* replaced, and */
  assert_false(g.heap_created);
  assert_false(g.grows); /* the next heap says whether it grows */
}

/* ---- fake driver ---- */
static CUcontext g_cur = CTX_A;
#define LIB_DM ((CUlibrary)0x11)
#define LIB_PLAIN ((CUlibrary)0x12)
#define MOD_DM ((CUmodule)0x21)
#define K_DM ((CUfunction)0x101)    /* CUkernel of LIB_DM */
#define K_PLAIN ((CUfunction)0x102) /* CUkernel of LIB_PLAIN */
#define F_DM ((CUfunction)0x201)    /* CUfunction of MOD_DM */
#define S_CAPTURE ((CUstream)0x301)
#define S_B ((CUstream)0x302) /* a stream of CTX_B */
static atomic_int g_probes;

static CUresult fd_get_current(CUcontext *c) {
  *c = g_cur;
  return CUDA_SUCCESS;
}
static CUresult fd_push(CUcontext c) { return CUDA_SUCCESS; }
static CUresult fd_pop(CUcontext *c) {
  *c = g_cur;
  return CUDA_SUCCESS;
}
static CUresult fd_stream_ctx(CUstream s, CUcontext *c) {
  *c = s == S_B ? CTX_B : CTX_A;
  return CUDA_SUCCESS;
}
static CUresult fd_capturing(CUstream s, CUstreamCaptureStatus *st) {
  *st = s == S_CAPTURE ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}
static CUresult fd_kernel_lib(CUlibrary *l, CUkernel k) {
  if ((CUfunction)k == K_DM) {
    *l = LIB_DM;
    return CUDA_SUCCESS;
  }
  if ((CUfunction)k == K_PLAIN) {
    *l = LIB_PLAIN;
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_HANDLE;
}
static CUresult fd_func_mod(CUmodule *m, CUfunction f) {
  if (f == F_DM) {
    *m = MOD_DM;
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_HANDLE;
}
static CUresult fd_lib_global(CUdeviceptr *p, size_t *n, CUlibrary l, const char *name) {
  atomic_fetch_add(&g_probes, 1);
  return l == LIB_DM && !strcmp(name, DEVMALLOC_DESC_SYMBOL) ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
static CUresult fd_mod_global(CUdeviceptr *p, size_t *n, CUmodule m, const char *name) {
  atomic_fetch_add(&g_probes, 1);
  return m == MOD_DM ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
static CUresult fd_exchange(CUstreamCaptureMode *m) {
  *m = CU_STREAM_CAPTURE_MODE_GLOBAL;
  return CUDA_SUCCESS;
}

static int setup(void **st) {
  dm_driver_set_library("/nonexistent/libcuda.so.1"); /* keep the fakes */
  dm_drv.cuCtxGetCurrent = fd_get_current;
  dm_drv.cuCtxPushCurrent_v2 = fd_push;
  dm_drv.cuCtxPopCurrent_v2 = fd_pop;
  dm_drv.cuStreamGetCtx = fd_stream_ctx;
  dm_drv.cuStreamIsCapturing = fd_capturing;
  dm_drv.cuKernelGetLibrary = fd_kernel_lib;
  dm_drv.cuFuncGetModule = fd_func_mod;
  dm_drv.cuLibraryGetGlobal = fd_lib_global;
  dm_drv.cuModuleGetGlobal_v2 = fd_mod_global;
  dm_drv.cuThreadExchangeStreamCaptureMode = fd_exchange;
  return 0;
}

static void reset_all(void) {
  fk_reset();
  g_probes = 0;
  dm_owners_reset_for_tests();
  dm_ctx_reset_for_tests();
}

/* ---- ctxtab.c ---- */
static void t_ctx_table(void **st) {
  reset_all();
  assert_null(dm_ctx_heap_peek(CTX_A));
  assert_int_equal(dm_ctx_limit_set(CTX_A, 48u << 20), DM_LIMIT_RECORD);
  fk_min_block = 0;
  fk_check = 0;
  fk_dense = 0;
  devmalloc_heap_t *h = dm_ctx_heap(CTX_A);
  assert_non_null(h);
  assert_int_equal(fk_last_bytes, 48u << 20);
  /* DEVMALLOC_GROW (set in main): the application's limit is the maximum
   * (DEVMALLOC_LIMIT_IS_MAX, default on), the heap starts with
   * DEVMALLOC_HEAP_INITIAL (64M, above the maximum: the maximum), the fixed
   * size is the fallback */
  assert_int_equal(fk_grow_cfg.max, 48u << 20);
  assert_int_equal(fk_grow_cfg.initial, 48u << 20);
  assert_int_equal(fk_grow_cfg.fallback, 48u << 20);
  assert_int_equal(fk_grow_cfg.wait_ms, 200);
  assert_int_equal(fk_min_block, 128);     /* DEVMALLOC_MIN_BLOCK, set in main */
  assert_int_equal(fk_check, 1);           /* DEVMALLOC_CHECK, set in main */
  assert_int_equal(fk_dense, 1);           /* DEVMALLOC_DENSE, set in main */
  assert_ptr_equal(dm_ctx_heap(CTX_A), h); /* one heap per context */
  assert_int_equal(fk_creates, 1);
  assert_int_equal(dm_ctx_limit_set(CTX_A, 48u << 20), DM_LIMIT_NOOP);
  dm_ctx_heap_bound(CTX_A); /* a module bound: size fixed */
  assert_int_equal(dm_ctx_limit_set(CTX_A, 8u << 20), DM_LIMIT_REJECT);
  size_t v = 0;
  assert_int_equal(dm_ctx_limit_get(CTX_A, &v), 1);
  assert_int_equal(v, 48u << 20);
  devmalloc_heap_t *hb = dm_ctx_heap(CTX_B); /* default size */
  assert_ptr_not_equal(hb, h);
  assert_int_equal(fk_last_bytes, DM_DEFAULT_HEAP_BYTES);
  assert_int_equal(fk_grow_cfg.initial, 64u << 20); /* DEVMALLOC_HEAP_INITIAL */
  assert_int_equal(fk_grow_cfg.max, 0);             /* no limit: the device's memory */
  assert_int_equal(dm_ctx_count(), 2);
  dm_ctx_teardown(CTX_A, 1);
  assert_int_equal(fk_destroys, 1);
  assert_null(dm_ctx_heap_peek(CTX_A));
  dm_ctx_teardown(CTX_B, 0); /* gone: forgotten, not freed */
  assert_int_equal(fk_destroys, 1);
  assert_int_equal(dm_ctx_count(), 0);
  assert_non_null(dm_ctx_heap(CTX_A)); /* re-created context */
  assert_int_equal(fk_creates, 3);
  /* a failed creation is reported once and not retried */
  reset_all();
  fk_create_fails = 1;
  assert_null(dm_ctx_heap(CTX_A));
  assert_null(dm_ctx_heap(CTX_A));
  assert_int_equal(fk_creates, 1);
  /* primary context bookkeeping */
  dm_ctx_primary_retained(0, CTX_A);
  dm_ctx_primary_retained(0, CTX_A);
  assert_ptr_equal(dm_ctx_primary_of(0), CTX_A);
  assert_int_equal(dm_ctx_primary_released(0), 1);
  assert_int_equal(dm_ctx_primary_released(0), 0);
  assert_int_equal(dm_ctx_primary_released(7), -1);
}

/* ---- owners.c ---- */
static void t_cache_owners(void **st) {
  reset_all();
  dm_verdict_t v;
  assert_int_equal(dm_lcache_get(K_DM, CTX_A, &v), 0);
  for (uintptr_t i = 1; i <= 1000; i++)
    dm_lcache_put((void *)(i * 16), i % 2 ? CTX_A : CTX_B, DM_VERDICT_NONE, (void *)(i % 3));
  assert_int_equal(dm_lcache_size(), 1000);
  assert_int_equal(dm_lcache_get((void *)(16 * 7), CTX_A, &v), 1);
  assert_int_equal(v, DM_VERDICT_NONE);
  dm_lcache_purge_ctx(CTX_B);
  assert_int_equal(dm_lcache_size(), 500);
  assert_int_equal(dm_lcache_get((void *)(16 * 8), CTX_B, &v), 0);
  dm_lcache_purge_owner((void *)1);
  assert_int_equal(dm_lcache_get((void *)(16 * 7), CTX_A, &v), 0); /* 7 % 3 == 1 */
  assert_int_equal(dm_lcache_get((void *)(16 * 9), CTX_A, &v), 1); /* 9 % 3 == 0 */
  dm_lcache_clear();
  assert_int_equal(dm_lcache_size(), 0);

  dm_owner_lock();
  dm_owner_t *o = dm_owner_get(DM_OWNER_LIBRARY, LIB_DM, 1);
  assert_ptr_equal(dm_owner_get(DM_OWNER_LIBRARY, LIB_DM, 0), o);
  assert_null(dm_owner_get(DM_OWNER_MODULE, LIB_DM, 0));
  dm_owner_set_loaded(o, "cuLibraryLoadData");
  dm_owner_set_bound(o, CTX_A);
  dm_owner_set_bound(o, CTX_B);
  assert_true(dm_owner_bound_in(o, CTX_B));
  dm_owner_t *m = dm_owner_get(DM_OWNER_MODULE, MOD_DM, 1); /* met at launch */
  dm_owner_forget_ctx(CTX_B);
  assert_false(dm_owner_bound_in(o, CTX_B));
  assert_true(dm_owner_bound_in(o, CTX_A));
  assert_null(dm_owner_get(DM_OWNER_MODULE, MOD_DM, 0)); /* derived module dropped */
  (void)m;
  dm_owner_remove(LIB_DM);
  assert_int_equal(dm_owner_count(), 0);
  dm_owner_unlock();
}

/* ---- image_scan.c ---- */
static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }

static size_t make_fatbin(unsigned char *b, const char *payload, uint64_t flags) {
  memset(b, 0, 512);
  size_t plen = strlen(payload) + 1;
  put32(b, 0xBA55ED50u);
  b[4] = 1;
  b[6] = 16; /* header size 16 */
  unsigned char *e = b + 16;
  put32(e + 4, 64); /* entry header size */
  put64(e + 8, plen);
  put64(e + 0x28, flags);
  memcpy(e + 64, payload, plen);
  put64(b + 8, 64 + plen);
  return 16 + 64 + plen;
}

static void t_image_scan(void **st) {
  unsigned char fb[512];
  make_fatbin(fb, "...devmalloc_heap_desc...", 0);
  assert_int_equal(dm_image_has_devmalloc(fb), DM_HAS_YES);
  assert_int_equal(dm_image_size(fb), 16 + 64 + 26);
  make_fatbin(fb, "plain cubin bytes", 0);
  assert_int_equal(dm_image_has_devmalloc(fb), DM_HAS_NO);
  make_fatbin(fb, "compressed bytes", 0x8000);
  assert_int_equal(dm_image_has_devmalloc(fb), DM_HAS_UNKNOWN);
  /* registration wrapper around it */
  make_fatbin(fb, "x devmalloc_heap_desc", 0);
  struct {
    uint32_t magic, version;
    const void *data;
    void *unused;
  } w = {0x466243B1u, 1, fb, 0};
  assert_int_equal(dm_image_has_devmalloc(&w), DM_HAS_YES);
  assert_int_equal(dm_image_has_devmalloc(".version 8.0\n.global .u64 devmalloc_heap_desc;\n"), DM_HAS_YES);
  assert_int_equal(dm_image_has_devmalloc(".version 8.0\n.entry k()\n"), DM_HAS_NO);
  assert_int_equal(dm_image_has_devmalloc("\x01\x02garbage"), DM_HAS_UNKNOWN);
}

static int scan_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  static unsigned char buf[1 << 22];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  assert_true(n > 64);
  assert_true(dm_image_size(buf) <= n);
  return dm_image_has_devmalloc(buf);
}

/* Cubins and fatbins nvcc produced in this build (skipped when absent). */
static void t_image_scan_real(void **st) {
  int r;
  if ((r = scan_file("build/gpu/shim/shim_kernels.cubin")) >= 0) assert_int_equal(r, DM_HAS_YES);
  if ((r = scan_file("build/relink/fixtures/devmalloc_rdc.cubin")) >= 0) assert_int_equal(r, DM_HAS_YES);
  if ((r = scan_file("build/relink/fixtures/plain.cubin")) >= 0) assert_int_equal(r, DM_HAS_NO);
  if ((r = scan_file("build/relink/fixtures/malloc.cubin")) >= 0) assert_int_equal(r, DM_HAS_NO);
  if ((r = scan_file("build/relink/fixtures/malloc_nocomp.fatbin")) >= 0) assert_int_equal(r, DM_HAS_NO);
  if ((r = scan_file("build/relink/fixtures/malloc_zstd_all.fatbin")) >= 0)
    assert_int_equal(r, DM_HAS_UNKNOWN);
}

/* ---- bind.c: the launch path ---- */
static void t_launch_path(void **st) {
  reset_all();
  dm_candidates_set();
  dm_prepare_launch(K_DM, NULL);
  assert_int_equal(fk_creates, 1);
  assert_int_equal(fk_binds_lib, 1);
  dm_prepare_launch(K_DM, NULL); /* cached */
  dm_prepare_launch(K_DM, CU_STREAM_PER_THREAD);
  assert_int_equal(fk_binds_lib, 1);
  assert_int_equal(g_probes, 1);
  dm_prepare_launch(K_PLAIN, NULL); /* no devmalloc: untouched */
  dm_prepare_launch(K_PLAIN, NULL);
  assert_int_equal(fk_binds_lib, 1);
  assert_int_equal(g_probes, 2);
  dm_prepare_launch(F_DM, NULL); /* CUfunction of a module */
  assert_int_equal(fk_binds_mod, 1);
  assert_int_equal(fk_creates, 1); /* same context, same heap */
  dm_prepare_launch(K_DM, S_B);    /* another context */
  assert_int_equal(fk_creates, 2);
  assert_int_equal(fk_binds_lib, 2);
  dm_prepare_launch((CUfunction)0x999, NULL); /* unknown owner: launched as is */
  assert_int_equal(fk_creates, 2);
  /* context destroyed: bound again in the re-created one */
  dm_owner_lock();
  dm_owner_forget_ctx(CTX_A);
  dm_owner_unlock();
  dm_ctx_teardown(CTX_A, 1);
  dm_prepare_launch(K_DM, NULL);
  assert_int_equal(fk_creates, 3);
  assert_int_equal(fk_binds_lib, 3);
}

static void t_capture_deferred(void **st) {
  reset_all();
  dm_candidates_set();
  dm_prepare_launch(K_DM, S_CAPTURE); /* nothing during capture */
  assert_int_equal(fk_creates, 0);
  assert_int_equal(g_probes, 0);
  dm_prepare_in_ctx(K_DM, CTX_A); /* what instantiation does */
  assert_int_equal(fk_creates, 1);
  assert_int_equal(fk_binds_lib, 1);
  dm_prepare_launch(K_DM, S_CAPTURE); /* already bound: cache hit */
  assert_int_equal(fk_binds_lib, 1);
}

static void *racer(void *arg) {
  for (int i = 0; i < 1000; i++) dm_prepare_launch(i % 2 ? K_DM : F_DM, NULL);
  return NULL;
}

static void t_concurrent_first_launch(void **st) {
  reset_all();
  dm_candidates_set();
  pthread_t t[8];
  for (int i = 0; i < 8; i++) pthread_create(&t[i], NULL, racer, NULL);
  for (int i = 0; i < 8; i++) pthread_join(t[i], NULL);
  assert_int_equal(fk_creates, 1);
  assert_int_equal(fk_binds_lib, 1);
  assert_int_equal(fk_binds_mod, 1);
}

/* The in-memory load hooks forward every argument to the driver, record the
 * loaded module/library only when the load succeeded, and pass a failure on. */
static const void *ld_image;
static unsigned ld_n;
static CUresult ld_result;
static CUresult f_load_data(CUmodule *m, const void *img) {
  ld_image = img;
  if (ld_result == CUDA_SUCCESS) *m = (CUmodule)0x7101;
  return ld_result;
}
static CUresult f_load_data_ex(CUmodule *m, const void *img, unsigned n, CUjit_option *o, void **v) {
  ld_image = img;
  ld_n = n;
  if (ld_result == CUDA_SUCCESS) *m = (CUmodule)0x7102;
  return ld_result;
}
static CUresult f_load_lib(CUlibrary *l, const void *img, CUjit_option *jo, void **jv, unsigned nj,
                           CUlibraryOption *lo, void **lv, unsigned nl) {
  ld_image = img;
  ld_n = nj + nl;
  if (ld_result == CUDA_SUCCESS) *l = (CUlibrary)0x7103;
  return ld_result;
}

static const char *ld_fname;
static CUresult f_load_file(CUmodule *m, const char *fname) {
  ld_fname = fname;
  if (ld_result == CUDA_SUCCESS) *m = (CUmodule)0x7104;
  return ld_result;
}

static void t_load_hooks(void **st) {
  reset_all();
  static const unsigned char plain[64] = {1, 2, 3}; /* no fatbin, no devmalloc */
  CUmodule m = NULL;
  CUlibrary l = NULL;
  ld_result = CUDA_SUCCESS;
  assert_int_equal(dm_h_module_load_data(f_load_data, &m, plain), CUDA_SUCCESS);
  assert_ptr_equal(ld_image, plain);
  assert_ptr_equal(m, (CUmodule)0x7101);
  dm_owner_lock();
  assert_non_null(dm_owner_get(DM_OWNER_MODULE, m, 0));
  dm_owner_unlock();
  assert_int_equal(dm_h_module_load_data_ex(f_load_data_ex, &m, plain, 3, NULL, NULL), CUDA_SUCCESS);
  assert_int_equal(ld_n, 3);
  assert_int_equal(dm_h_library_load_data(f_load_lib, &l, plain, NULL, NULL, 2, NULL, NULL, 5), CUDA_SUCCESS);
  assert_int_equal(ld_n, 7);
  dm_owner_lock();
  assert_non_null(dm_owner_get(DM_OWNER_LIBRARY, l, 0));
  dm_owner_unlock();
  ld_result = CUDA_ERROR_INVALID_IMAGE; /* a failed load is passed on, not recorded */
  CUmodule m2 = NULL;
  assert_int_equal(dm_h_module_load_data(f_load_data, &m2, plain), CUDA_ERROR_INVALID_IMAGE);
  assert_null(m2);
  assert_int_equal(fk_binds_mod + fk_binds_lib, 0); /* nothing bound: no devmalloc in it */
  /* a file that cannot be re-linked is loaded as it is, and recorded */
  ld_result = CUDA_SUCCESS;
  CUmodule m3 = NULL;
  assert_int_equal(dm_h_module_load(f_load_file, &m3, "/nonexistent/mod.cubin"), CUDA_SUCCESS);
  assert_string_equal(ld_fname, "/nonexistent/mod.cubin");
  dm_owner_lock();
  assert_non_null(dm_owner_get(DM_OWNER_MODULE, m3, 0));
  dm_owner_unlock();
}

/* ---- hook_ctx.c: the limit hook against sizes no device has ---- */
#define FAKE_DEVICE_BYTES (80ull << 30)
static int stock_refuses_all; /* a stock-malloc kernel already ran */
static CUresult fd_ctx_device(CUdevice *d) {
  *d = 0;
  return CUDA_SUCCESS;
}
static CUresult fd_total_mem(size_t *b, CUdevice d) {
  *b = FAKE_DEVICE_BYTES;
  return CUDA_SUCCESS;
}
static CUresult f_set_limit(CUlimit l, size_t v) {
  return stock_refuses_all || v > FAKE_DEVICE_BYTES ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

static void t_limit_hook_sizes(void **st) {
  reset_all();
  dm_drv.cuCtxGetDevice = fd_ctx_device;
  dm_drv.cuDeviceTotalMem_v2 = fd_total_mem;
  dm_candidates_set();
  g_cur = CTX_A;
  size_t v = 0;
  assert_int_equal(dm_h_ctx_set_limit(f_set_limit, CU_LIMIT_MALLOC_HEAP_SIZE, SIZE_MAX),
                   CUDA_ERROR_INVALID_VALUE);
  assert_int_equal(dm_h_ctx_set_limit(f_set_limit, CU_LIMIT_MALLOC_HEAP_SIZE, FAKE_DEVICE_BYTES + 1),
                   CUDA_ERROR_INVALID_VALUE);
  assert_int_equal(dm_h_ctx_get_limit(NULL, &v, CU_LIMIT_MALLOC_HEAP_SIZE), CUDA_SUCCESS);
  assert_int_equal(v, DM_DEFAULT_HEAP_BYTES); /* nothing was recorded */
  /* a size the device has is devmalloc's even when the stock heap refuses it */
  stock_refuses_all = 1;
  assert_int_equal(dm_h_ctx_set_limit(f_set_limit, CU_LIMIT_MALLOC_HEAP_SIZE, 1ull << 30), CUDA_SUCCESS);
  assert_int_equal(dm_h_ctx_get_limit(NULL, &v, CU_LIMIT_MALLOC_HEAP_SIZE), CUDA_SUCCESS);
  assert_int_equal(v, 1ull << 30);
  stock_refuses_all = 0;
  /* the heap is made at the limit call, not in the first launch; a new
   * size before any kernel bound it replaces it; after a bind it is fixed */
  assert_int_equal(fk_creates, 1);
  assert_int_equal(fk_last_bytes, 1ull << 30);
  assert_int_equal(dm_h_ctx_set_limit(f_set_limit, CU_LIMIT_MALLOC_HEAP_SIZE, 2ull << 30), CUDA_SUCCESS);
  assert_int_equal(fk_destroys, 1);
  assert_int_equal(fk_creates, 2);
  assert_int_equal(fk_last_bytes, 2ull << 30);
  dm_ctx_heap_bound(CTX_A);
  assert_int_equal(dm_h_ctx_set_limit(f_set_limit, CU_LIMIT_MALLOC_HEAP_SIZE, 1ull << 30),
                   CUDA_ERROR_INVALID_VALUE);
  assert_int_equal(dm_h_ctx_set_limit(f_set_limit, CU_LIMIT_MALLOC_HEAP_SIZE, 2ull << 30), CUDA_SUCCESS);
  assert_int_equal(fk_creates, 2);
  reset_all();
}

/* ---- read ahead at the first primary retain (jit_ahead.c) ---- */
extern const unsigned char fx_registered_fatbin[], fx_registered_fatbin_end[];
static int ra_calls, ra_dev, retain_calls;
static const void *ra_body;
static size_t ra_len;
static pthread_t ra_thread;
static int fk_read_ahead(const void *body, size_t len, int dev, char *why, size_t whylen) {
  (void)why;
  (void)whylen;
  ra_calls++;
  ra_body = body;
  ra_len = len;
  ra_dev = dev;
  ra_thread = pthread_self();
  return 1;
}
static CUresult f_retain(CUcontext *c, CUdevice d) {
  (void)d;
  retain_calls++;
  *c = (CUcontext)0x3000;
  return CUDA_SUCCESS;
}

/* The first retain reads the program's fatbin (tests/fixtures/fx_registered.c)
 * ahead for its device, in a thread of its own that is done when the hook
 * returns; later retains read nothing. */
static void t_retain_reads_ahead(void **st) {
  (void)st;
  CUcontext c = NULL;
  assert_int_equal(dm_h_primary_retain(f_retain, &c, 3), CUDA_SUCCESS);
  assert_ptr_equal(c, (CUcontext)0x3000);
  assert_int_equal(ra_calls, 1);
  assert_ptr_equal(ra_body, fx_registered_fatbin);
  assert_int_equal(ra_len, (size_t)(fx_registered_fatbin_end - fx_registered_fatbin));
  assert_int_equal(ra_dev, 3);
  assert_false(pthread_equal(ra_thread, pthread_self()));
  assert_int_equal(dm_h_primary_retain(f_retain, &c, 3), CUDA_SUCCESS);
  assert_int_equal(ra_calls, 1);
  assert_int_equal(retain_calls, 2);
}

int main(void) {
  setenv("DEVMALLOC_MIN_BLOCK", "128", 1); /* read once, at the first heap creation */
  setenv("DEVMALLOC_GROW", "1", 1);        /* heaps that grow (off by default) */
  setenv("DEVMALLOC_CHECK", "1", 1);
  setenv("DEVMALLOC_DENSE", "1", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_limit_hook_sizes),
      cmocka_unit_test(t_limit),
      cmocka_unit_test(t_ctx_table),
      cmocka_unit_test(t_cache_owners),
      cmocka_unit_test(t_image_scan),
      cmocka_unit_test(t_image_scan_real),
      cmocka_unit_test(t_launch_path),
      cmocka_unit_test(t_capture_deferred),
      cmocka_unit_test(t_concurrent_first_launch),
      cmocka_unit_test(t_load_hooks),
      cmocka_unit_test(t_retain_reads_ahead),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
