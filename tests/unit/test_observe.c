/*
 * test_observe.c — the shim's observability without a GPU: the JSON and CSV
 * forms of a stats record parse (python3's json and csv modules) and carry
 * every counter; the summary at exit as JSON, including a context whose
 * counters could no longer be read (status context_lost, last known
 * counters); the trace file's samples (create, launch with the kernel's
 * name, sync, destroy; none for a launch into a capturing stream); the
 * periodic sampler thread; NVTX ranges and markers as a profiler sees them
 * (and none when off); the sampling rule; the re-link count; the option
 * parsers.
 *
 * Runs from the repository root (tests/unit/stats_canon.py). The options are
 * read once per process, so main() sets them before the first test; the
 * stats format is json unless DEVMALLOC_STATS is set (make check also runs
 * it with csv and with the text summary).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#define FK_RELINK_SIZED fake_relink_sized
#include "shim_fake.h"
#include "obs.h"
#include "relink.h"
#define NVTX_NO_IMPL /* the types a tool sees, not a second NVTX implementation */
#include <nvtx3/nvToolsExt.h>

#define CTX_A ((CUcontext)0x1000)
#define CTX_B ((CUcontext)0x2000)
#define F_K ((CUfunction)0x501)
#define S_CAPTURE ((CUstream)0x601)

static char g_dir[] = "/tmp/dm-observe-XXXXXX";
static char g_stats[256], g_trace[256];
static CUcontext g_cur = CTX_A;

static CUresult fd_get_current(CUcontext *c) {
  *c = g_cur;
  return CUDA_SUCCESS;
}
static CUresult fd_push(CUcontext c) { return CUDA_SUCCESS; }
static CUresult fd_pop(CUcontext *c) {
  *c = g_cur;
  return CUDA_SUCCESS;
}
static CUresult fd_device(CUdevice *d) {
  *d = 0;
  return CUDA_SUCCESS;
}
static CUresult fd_ctx_id(CUcontext c, unsigned long long *id) {
  *id = c == CTX_A ? 1 : 2;
  return CUDA_SUCCESS;
}
static CUresult fd_capturing(CUstream s, CUstreamCaptureStatus *st) {
  *st = s == S_CAPTURE ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}
static CUresult fd_func_name(const char **n, CUfunction f) {
  if (f != F_K) return CUDA_ERROR_INVALID_HANDLE;
  *n = "_Z6k_fakePv";
  return CUDA_SUCCESS;
}

/* Output of stats_canon.py for FILE in format fmt (malloc'd). */
static char *canon(const char *fmt, const char *file) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "python3 tests/unit/stats_canon.py %s %s", fmt, file);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  size_t cap = 1 << 16, n = 0;
  char *buf = calloc(1, cap);
  size_t k;
  while ((k = fread(buf + n, 1, cap - 1 - n, p)) > 0) n += k;
  buf[n] = 0;
  assert_int_equal(pclose(p), 0);
  return buf;
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* The n-th record (from 0) of a canonical dump, as its own string. */
static char *record(const char *dump, int n) {
  const char *p = dump;
  for (int i = 0; i < n; i++) {
    p = strstr(p, "--\n");
    assert_non_null(p);
    p += 3;
  }
  const char *e = strstr(p, "--\n");
  assert_non_null(e);
  return strndup(p, (size_t)(e - p));
}

static void has(const char *rec, const char *kv) {
  char line[200];
  snprintf(line, sizeof line, "%s\n", kv);
  if (!strstr(rec, line)) fail_msg("missing %s in record:\n%s", kv, rec);
}

/* ---- stats_rec.c ---- */
static void t_records_parse(void **st) {
  dm_stats_rec_t r = {7, 3, DM_REC_LOST, DM_REC_LAST_KNOWN, 9, {0}};
  devmalloc_stats_t *s = &r.s;
  s->heap_bytes = 1001;
  s->pool_bytes = 1002;
  s->mapped_bytes = 1003;
  s->growth_events = 1004;
  s->allocs = 1005;
  s->frees = 1006;
  s->failures = 1007;
  s->double_frees = 1008;
  s->foreign_frees = 1009;
  s->bytes_in_use = 1010;
  s->footprint_bytes = 1011;
  s->peak_bytes = 1012;
  s->large_allocs = 1013;
  for (int c = 0; c < DEVMALLOC_NUM_CLASSES; c++) {
    s->class_size[c] = 16ull << c;
    s->class_allocs[c] = 100u + (unsigned)c;
  }
  char j[DM_REC_MAX], h[DM_REC_MAX], row[DM_REC_MAX], path[300], text[3 * DM_REC_MAX];
  assert_true(dm_rec_json(j, sizeof j, &r, NULL) > 0);
  snprintf(path, sizeof path, "%s/rec.jsonl", g_dir);
  snprintf(text, sizeof text, "%s\n", j);
  write_file(path, text);
  char *cj = canon("json", path);
  assert_true(dm_rec_csv_header(h, sizeof h) > 0);
  assert_true(dm_rec_csv_row(row, sizeof row, &r) > 0);
  snprintf(path, sizeof path, "%s/rec.csv", g_dir);
  snprintf(text, sizeof text, "%s\n%s\n", h, row);
  write_file(path, text);
  char *cc = canon("csv", path);
  assert_string_equal(cj, cc); /* same keys, same values */
  static const char *const want[] = {"context=7",
                                     "device=3",
                                     "status=context_lost",
                                     "counters=last_known",
                                     "heap_bytes=1001",
                                     "pool_bytes=1002",
                                     "mapped_bytes=1003",
                                     "growth_events=1004",
                                     "allocs=1005",
                                     "frees=1006",
                                     "failures=1007",
                                     "double_frees=1008",
                                     "foreign_frees=1009",
                                     "bytes_in_use=1010",
                                     "footprint_bytes=1011",
                                     "peak_bytes=1012",
                                     "large_allocs=1013",
                                     "relinked_modules=9",
                                     "class0_size=16",
                                     "class0_allocs=100",
                                     "class17_size=2097152",
                                     "class17_allocs=117",
                                     "class30_size=17179869184",
                                     "class30_allocs=130"};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) has(cj, want[i]);
  free(cj);
  free(cc);
  assert_int_equal(dm_rec_json(j, 64, &r, NULL), -1); /* too small: says so */
  assert_int_equal(dm_rec_csv_row(row, 32, &r), -1);
}

/* ---- ctxtab.c + trace.c: the summary at exit and the trace ---- */
static CUresult fake_ctx_sync(void) { return CUDA_SUCCESS; }

static void t_exit_and_trace(void **st) {
  fk_reset();
  dm_ctx_reset_for_tests();
  g_cur = CTX_A;
  assert_non_null(dm_ctx_heap(CTX_A)); /* trace: create */
  dm_obs_launch(F_K, NULL);            /* trace: launch, kernel name */
  dm_obs_launch(F_K, S_CAPTURE);       /* captured: not launched, no sample */
  fk_allocs = 100;
  assert_int_equal(dm_h_ctx_sync_current(fake_ctx_sync), CUDA_SUCCESS); /* trace: sync
                                                   * (cuCtxSynchronize), 100 allocs */
  fk_stats_fails = 1;                                                   /* a device fault: reads fail */
  dm_ctx_teardown(CTX_A, 1);                                            /* trace: destroy, last known */
  fk_stats_fails = 0;
  fk_allocs = 7;
  g_cur = CTX_B;
  assert_non_null(dm_ctx_heap(CTX_B));
  dm_ctx_print_stats();

  const char *fmt = getenv("DEVMALLOC_STATS");
  char *c;
  if (strcmp(fmt, "json") && strcmp(fmt, "csv")) { /* the text summary */
    FILE *f = fopen(g_stats, "r");
    assert_non_null(f);
    c = calloc(1, 1 << 16);
    size_t n = fread(c, 1, (1 << 16) - 1, f);
    fclose(f);
    c[n] = 0;
    if (!strstr(c, "devmalloc: stats: context 1 (device 0, context lost, last known counters): "
                   "heap 256 MiB, allocs 100,") ||
        !strstr(c, "devmalloc: stats: context 2 (device 0): heap 256 MiB, allocs 7,") ||
        strstr(c, "no heap was created"))
      fail_msg("text summary:\n%s", c);
    free(c);
  } else {
    c = canon(fmt, g_stats);
    char *a = record(c, 0), *b = record(c, 1);
    has(a, "context=1");
    has(a, "status=context_lost");
    has(a, "counters=last_known");
    has(a, "allocs=100");
    has(a, "bytes_in_use=1600");
    has(b, "context=2");
    has(b, "status=live");
    has(b, "counters=exact");
    has(b, "allocs=7");
    has(b, "class0_allocs=7");
    int nrec = 0;
    for (const char *p = c; (p = strstr(p, "--\n")); p += 3) nrec++;
    assert_int_equal(nrec, 2);
    if (!strcmp(fmt, "json")) has(a, "record=stats");
    free(a);
    free(b);
    free(c);
  }

  c = canon("json", g_trace);
  static const char *const ev[] = {"record=trace", "event=create",  "event=launch",
                                   "event=sync",   "event=destroy", "event=create"};
  for (int i = 0; i < 6; i++) {
    char *r = record(c, i);
    has(r, ev[i]);
    if (i == 2) {
      has(r, "kernel=_Z6k_fakePv");
      has(r, "launches=1");
    }
    if (i == 3) {
      has(r, "allocs=100");
      has(r, "status=live");
      has(r, "launches=1");
    }
    if (i == 4) {
      has(r, "allocs=100");
      has(r, "status=context_lost");
    }
    if (i == 5) has(r, "context=2");
    free(r);
  }
  free(c);
}

/* A context that never had its counters read: status lost, no counters. */
static void t_lost_without_counters(void **st) {
  fk_reset();
  dm_ctx_reset_for_tests();
  g_cur = CTX_A;
  fk_stats_fails = 1; /* even the sample at creation fails */
  assert_non_null(dm_ctx_heap(CTX_A));
  dm_stats_rec_t r;
  assert_int_equal(dm_ctx_sample(CTX_A, &r), 0);
  assert_int_equal(r.status, DM_REC_LOST);
  assert_int_equal(r.counters, DM_REC_NONE);
  assert_int_equal(r.s.heap_bytes, fk_last_bytes); /* the size asked for */
  assert_int_equal(r.s.allocs, 0);
  assert_int_equal(dm_ctx_sample(CTX_B, &r), -1); /* no heap there */
  dm_ctx_teardown(CTX_A, 1);
  fk_stats_fails = 0;
}

/* ---- the re-link count: a fake re-link (FK_RELINK_SIZED) ---- */
/* PTX-like text, so that the load hook's bounding (image_bound.c) takes it */
static const char g_stock[] = ".version 9.0 // a module calling the stock malloc", g_relinked[] = "re-linked";
static int g_relinked_fails; /* the driver refuses the re-linked image */
static int fake_relink_sized(const void *image, const void *body, size_t len, const void **out,
                             size_t *out_size, char *why, size_t whylen) {
  if (image != g_stock || body != g_stock || len != sizeof g_stock) return 0;
  *out = g_relinked;
  *out_size = sizeof g_relinked;
  return 1;
}
static CUresult fd_load_data(CUmodule *m, const void *image) {
  *m = (CUmodule)0x701;
  return image == g_relinked && g_relinked_fails ? CUDA_ERROR_INVALID_IMAGE : CUDA_SUCCESS;
}

static void t_relinked_count(void **st) {
  CUmodule m;
  g_cur = (CUcontext)0x3000; /* no heap: nothing to bind */
  uint64_t n0 = dm_obs_relinked_count();
  assert_int_equal(dm_h_module_load_data(fd_load_data, &m, g_stock), CUDA_SUCCESS);
  assert_int_equal(dm_obs_relinked_count(), n0 + 1);
  g_relinked_fails = 1; /* the original loads instead */
  assert_int_equal(dm_h_module_load_data(fd_load_data, &m, g_stock), CUDA_SUCCESS);
  assert_int_equal(dm_obs_relinked_count(), n0 + 1);
  g_relinked_fails = 0;
  dm_stats_rec_t r;
  g_cur = CTX_B;
  assert_non_null(dm_ctx_heap(CTX_B));
  assert_int_equal(dm_ctx_sample(CTX_B, &r), 0); /* records carry the count */
  assert_int_equal(r.relinked_modules, n0 + 1);
}

/* ---- trace_timer.c ---- */
static int count_in_file(const char *path, const char *needle) {
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  static char buf[1 << 20];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  int k = 0;
  for (const char *p = buf; (p = strstr(p, needle)); p++) k++;
  return k;
}

static void t_timer(void **st) {
  g_cur = CTX_B;
  assert_non_null(dm_ctx_heap(CTX_B)); /* a live context to sample */
  int before = count_in_file(g_trace, "\"event\":\"timer\"");
  dm_trace_timer_start(2, dm_trace_sample_all);
  dm_trace_timer_start(2, dm_trace_sample_all); /* once: no second thread */
  usleep(40000);
  dm_trace_timer_stop();
  int during = count_in_file(g_trace, "\"event\":\"timer\"") - before;
  assert_true(during >= 3 && during <= 25); /* ~20 at 2 ms, with slack */
  usleep(10000);
  assert_int_equal(count_in_file(g_trace, "\"event\":\"timer\"") - before, during); /* stopped */
  dm_trace_timer_stop();                                                            /* idempotent */
}

/* ---- nvtx.c: a static NVTX injection, the way a profiler attaches, records
 * what the shim emits ---- */
static char g_nvtx[8192];
static pthread_mutex_t g_nvtx_mu = PTHREAD_MUTEX_INITIALIZER;
static void nvtx_log(const char *what, const char *msg) {
  pthread_mutex_lock(&g_nvtx_mu);
  size_t n = strlen(g_nvtx);
  snprintf(g_nvtx + n, sizeof g_nvtx - n, "%s %s\n", what, msg);
  pthread_mutex_unlock(&g_nvtx_mu);
}
static const char *ascii(const nvtxEventAttributes_t *a) {
  return a && a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii : "?";
}
static int NVTX_API inj_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  nvtx_log("push", ascii(a));
  return 0;
}
static int NVTX_API inj_pop(nvtxDomainHandle_t d) {
  nvtx_log("pop", "-");
  return 0;
}
static void NVTX_API inj_mark(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  nvtx_log("mark", ascii(a));
}
static nvtxDomainHandle_t NVTX_API inj_domain(const char *name) {
  nvtx_log("domain", name);
  return (nvtxDomainHandle_t)0x77;
}
static int NVTX_API inj_init(NvtxGetExportTableFunc_t get) {
  const NvtxExportTableCallbacks *cb = (const NvtxExportTableCallbacks *)get(NVTX_ETID_CALLBACKS);
  NvtxFunctionTable t;
  unsigned int n = 0;
  if (!cb || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) || n <= NVTX_CBID_CORE2_DomainCreateA)
    return 0;
  *t[NVTX_CBID_CORE2_DomainRangePushEx] = (NvtxFunctionPointer)inj_push;
  *t[NVTX_CBID_CORE2_DomainRangePop] = (NvtxFunctionPointer)inj_pop;
  *t[NVTX_CBID_CORE2_DomainMarkEx] = (NvtxFunctionPointer)inj_mark;
  *t[NVTX_CBID_CORE2_DomainCreateA] = (NvtxFunctionPointer)inj_domain;
  return 1;
}
NvtxInitializeInjectionNvtxFunc_t InitializeInjectionNvtx2_fnptr = inj_init;

static void t_nvtx(void **st) {
  int on = !strcmp(getenv("DEVMALLOC_NVTX"), "1");
  g_cur = (CUcontext)0x4000;
  assert_non_null(dm_ctx_heap((CUcontext)0x4000)); /* a range around creation */
  dm_obs_event(DM_OBS_CACHE_MISS, "app.ptx");      /* a marker */
  if (!on) {                                       /* DEVMALLOC_NVTX=0: no call at all */
    assert_string_equal(g_nvtx, "");
    return;
  }
  static const char *const want[] = {"domain devmalloc\n",
                                     "push devmalloc: load-time re-link of image ", /* t_relinked_count */
                                     "push devmalloc: create heap (256 MiB, context 2)\npop -\n",
                                     "mark devmalloc: re-link cache miss: app.ptx\n"};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    if (!strstr(g_nvtx, want[i])) fail_msg("NVTX lacks '%s'; got:\n%s", want[i], g_nvtx);
}

static void t_due(void **st) {
  const uint64_t ms = 1000000;
  assert_true(dm_trace_due(UINT64_MAX, 0, DM_TP_LAUNCH, 10, 1)); /* first one */
  assert_false(dm_trace_due(5 * ms, 3, DM_TP_LAUNCH, 10, 1));    /* throttled */
  assert_true(dm_trace_due(10 * ms, 0, DM_TP_LAUNCH, 10, 1));
  assert_true(dm_trace_due(3 * ms, 1, DM_TP_SYNC, 10, 1));  /* launches since */
  assert_false(dm_trace_due(3 * ms, 0, DM_TP_SYNC, 10, 1)); /* nothing new */
  assert_false(dm_trace_due(2 * ms, 4, DM_TP_SYNC, 10, 1)); /* < interval / 4 */
  assert_false(dm_trace_due(3 * ms, 1, DM_TP_SYNC, 10, 0)); /* stats only */
  assert_true(dm_trace_due(0, 0, DM_TP_LAUNCH, 0, 1));      /* interval 0 */
}

static void t_option_parsers(void **st) {
  dm_opt_statsfmt_t f = DM_STATS_OFF;
  assert_int_equal(dm_parse_statsfmt(" json ", &f), 0);
  assert_int_equal(f, DM_STATS_JSON);
  assert_int_equal(dm_parse_statsfmt("CSV", &f), 0);
  assert_int_equal(f, DM_STATS_CSV);
  assert_int_equal(dm_parse_statsfmt("1", &f), 0);
  assert_int_equal(f, DM_STATS_TEXT);
  assert_int_equal(dm_parse_statsfmt("off", &f), 0);
  assert_int_equal(f, DM_STATS_OFF);
  assert_int_equal(dm_parse_statsfmt("xml", &f), -1);
  assert_int_equal(dm_parse_statsfmt("", &f), -1);
  dm_opt_ms_t m = 0;
  assert_int_equal(dm_parse_ms("250", &m), 0);
  assert_int_equal(m, 250);
  assert_int_equal(dm_parse_ms("5ms", &m), 0);
  assert_int_equal(m, 5);
  assert_int_equal(dm_parse_ms("0", &m), 0);
  assert_int_equal(m, 0);
  static const char *const bad[] = {"-1", "1.5", "fast", "60001", "", "10s"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) assert_int_equal(dm_parse_ms(bad[i], &m), -1);
}

static void cleanup(void) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
  if (system(cmd) != 0) fprintf(stderr, "test_observe: cannot remove %s\n", g_dir);
}

int main(void) {
  if (!mkdtemp(g_dir)) return 1;
  snprintf(g_stats, sizeof g_stats, "%s/stats.jsonl", g_dir);
  snprintf(g_trace, sizeof g_trace, "%s/trace.jsonl", g_dir);
  setenv("DEVMALLOC_STATS", "json", 0); /* check_observe_formats runs csv and text too */
  setenv("DEVMALLOC_STATS_FILE", g_stats, 1);
  setenv("DEVMALLOC_TRACE", g_trace, 1);
  setenv("DEVMALLOC_TRACE_INTERVAL", "0", 1);
  setenv("DEVMALLOC_NVTX", "1", 0);                   /* check_observe_formats also runs it off */
  dm_driver_set_library("/nonexistent/libcuda.so.1"); /* keep the fakes */
  dm_driver_init(); /* the driver's first use, as in a process: wires the trace's sampler */
  dm_drv.cuCtxGetCurrent = fd_get_current;
  dm_drv.cuCtxPushCurrent_v2 = fd_push;
  dm_drv.cuCtxPopCurrent_v2 = fd_pop;
  dm_drv.cuCtxGetDevice = fd_device;
  dm_drv.cuCtxGetId = fd_ctx_id;
  dm_drv.cuFuncGetName = fd_func_name;
  dm_drv.cuStreamIsCapturing = fd_capturing;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_records_parse),
      cmocka_unit_test(t_exit_and_trace),
      cmocka_unit_test(t_lost_without_counters),
      cmocka_unit_test(t_relinked_count),
      cmocka_unit_test(t_timer),
      cmocka_unit_test(t_nvtx),
      cmocka_unit_test(t_due),
      cmocka_unit_test(t_option_parsers),
  };
  atexit(cleanup); /* first registered: runs after the shim's exit output */
  return cmocka_run_group_tests(tests, NULL, NULL);
}
