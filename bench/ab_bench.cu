/*
 * ab_bench.cu — the A/B benchmark's driver: options, the timing harness and
 * the CSV rows; the kernels are in ab_kernels.cuh, the workloads in
 * ab_workloads.cuh (one translation unit). Built twice from this one
 * source: `ab_stock` (CUDA's own device malloc) and `ab_devmalloc` (relinked
 * with devmalloc, -DDM_BENCH_DEVMALLOC). bench/run.sh runs both in one
 * invocation and bench/report.py puts them side by side.
 *
 * Every timed kernel is bracketed by CUDA events after a warm-up round; the
 * figure is the median of --reps repetitions; every launch is checked.
 * Output: CSV rows on stdout:
 *   variant,workload,size,threads,kernel,ms,mops,failures,note
 * Mop/s counts the operations of the threads that took part (allocating
 * threads for alloc/pair, freeing threads for free). --variant-name NAME
 * relabels the first column (e.g. "shim": the stock binary under the
 * LD_PRELOAD shim, or "devmalloc@64M").
 */
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include "../host/options/opt_parse.h" /* the project's one size syntax */
#ifdef DM_BENCH_DEVMALLOC
#include "devmalloc_cuda.h"
static const char *variant = "devmalloc";
#else
static const char *variant = "stock";
#endif

#define CK(x)                                                                                              \
  do {                                                                                                     \
    cudaError_t e_ = (x);                                                                                  \
    if (e_ != cudaSuccess) {                                                                               \
      fprintf(stderr, "ab_bench(%s): %s at %s:%d\n", variant, cudaGetErrorString(e_), __FILE__, __LINE__); \
      exit(3);                                                                                             \
    }                                                                                                      \
  } while (0)

struct opts_t {
  size_t heap = 4ull << 30;
  size_t threads = 1u << 20;
  int reps = 5;
  double max_seconds = 4.0; /* per kernel: fewer threads beyond this (noted) */
  std::string workloads = "sizes,scaling,mixed,divergent,churn,graph,util,init";
  std::vector<size_t> sizes;
  std::vector<size_t> size_threads; /* per --sizes entry: SIZE:THREADS, 0 = not given */
  bool shim_heap = false;           /* devmalloc variant under the LD_PRELOAD shim: it makes the heap */
  bool grow = false;       /* devmalloc variant: a heap that grows (64 MiB at first, --heap at most) */
  bool dense = false;      /* devmalloc variant: DEVMALLOC_DENSE (two 16 B blocks per 32-byte sector) */
  bool first = false;      /* a row for each size's first kernel (its pilot): time and NULLs */
  size_t grow_initial = 0; /* --grow: mapped at first (0: the runtime's default, 64 MiB) */
  size_t grow_step = 0;    /* --grow: mapping unit (0: the runtime's default) */
};
static opts_t O;

#include "ab_kernels.cuh"

/* ---------------------------------------------------------- harness --- */
static cudaEvent_t ev0, ev1;
static unsigned long long *dctr; /* device counters */
static unsigned blocks(size_t n) { return (unsigned)((n + 255) / 256); }

static void row(const char *wl, size_t size, size_t threads, const char *kernel, double ms, double ops,
                unsigned long long fails, const char *note = "") {
  printf("%s,%s,%zu,%zu,%s,%.4f,%.3f,%llu,%s\n", variant, wl, size, threads, kernel, ms,
         ms > 0 ? ops / (ms * 1e3) : 0.0, fails, note);
  fflush(stdout);
}

template <typename F> static float timed(F launch) {
  CK(cudaEventRecord(ev0));
  launch();
  CK(cudaGetLastError());
  CK(cudaEventRecord(ev1));
  CK(cudaEventSynchronize(ev1));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, ev0, ev1));
  return ms;
}
static float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
static unsigned long long read_ctr(int i) {
  CK(cudaGetLastError()); /* the kernels launched since the last check */
  unsigned long long v;
  CK(cudaMemcpy(&v, dctr + i, sizeof v, cudaMemcpyDeviceToHost));
  return v;
}
static void zero_ctrs() {
  CK(cudaGetLastError());
  CK(cudaMemset(dctr, 0, 4 * sizeof *dctr));
}

static void **ptrs_buf;
static size_t ptrs_cap;
static void **ptrs(size_t n) {
  if (n > ptrs_cap) {
    if (ptrs_buf) CK(cudaFree(ptrs_buf));
    CK(cudaMalloc(&ptrs_buf, n * sizeof(void *)));
    ptrs_cap = n;
  }
  return ptrs_buf;
}

#include "ab_workloads.cuh"

static void usage() {
  fprintf(stderr, "usage: ab_bench [--heap BYTES] [--threads N] [--reps R] [--max-seconds S]\n"
                  "                [--workloads list] [--sizes s1[:threads1],s2,...] [--shim-heap]\n"
                  "                [--variant-name NAME] [--grow [--grow-initial B] [--grow-step B]] "
                  "[--dense] [--first]\n"
                  "--first: a row (kernel \"first\") for each size's first, untimed-before kernel: its time\n"
                  "         and its NULLs (in a process of its own it meets an empty heap)\n"
                  "--dense: (devmalloc) dense small blocks, two 16 B blocks per 32-byte sector\n"
                  "--grow: (devmalloc) a heap that grows from 64 MiB (--grow-initial) up to --heap\n"
                  "        instead of a fixed one (the variant is then named devmalloc-grow)\n"
                  "--shim-heap: run under libdevmalloc_preload.so, which creates the heap (sized by\n"
                  "             cudaDeviceSetLimit) at the first launch; e.g. to write a trace\n"
                  "--sizes 1K:32K: 1 KiB with 32768 threads as given (default: --threads, at\n"
                  "             most half the heap); with util, the fills to run ('mixed':\n"
                  "             16..4096 B)\n"
                  "--variant-name NAME: the label of the first CSV column (default stock/devmalloc)\n"
                  "workloads: sizes,scaling,mixed,divergent,churn,graph,util,init,limit (a per-warp bump\n"
                  "           allocator and a no-op free: the ceiling on these shapes); or firstpass\n"
                  "           alone (the first alloc kernel on a fresh heap vs the next passes)\n");
  exit(2);
}

/* The project's one size syntax (host/options/opt_parse.h): 4096, 64M, 1.5G. */
static size_t parse_bytes(const char *s) {
  uint64_t v;
  if (dm_parse_bytes(s, &v) || v > SIZE_MAX) {
    fprintf(stderr, "ab_bench: bad size '%s': expected %s\n", s, DM_OPT_FORMS_bytes);
    exit(2);
  }
  return (size_t)v;
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto next = [&]() -> const char * {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (a == "--heap")
      O.heap = parse_bytes(next());
    else if (a == "--threads")
      O.threads = parse_bytes(next());
    else if (a == "--reps")
      O.reps = atoi(next());
    else if (a == "--max-seconds")
      O.max_seconds = atof(next());
    else if (a == "--workloads")
      O.workloads = next();
    else if (a == "--shim-heap")
      O.shim_heap = true;
    else if (a == "--variant-name")
      variant = next();
    else if (a == "--grow")
      O.grow = true;
    else if (a == "--dense")
      O.dense = true;
    else if (a == "--first")
      O.first = true;
    else if (a == "--grow-initial")
      O.grow_initial = parse_bytes(next());
    else if (a == "--grow-step")
      O.grow_step = parse_bytes(next());
    else if (a == "--sizes") {
      std::string l = next();
      for (size_t p = 0; p < l.size();) {
        size_t q = l.find(',', p);
        std::string e = l.substr(p, q == std::string::npos ? q : q - p);
        size_t c = e.find(':');
        std::string sz = e.substr(0, c);
        O.sizes.push_back(sz == "mixed" ? 0 : parse_bytes(sz.c_str())); /* 0: mixed 16..4096 B */
        O.size_threads.push_back(c == std::string::npos ? 0 : parse_bytes(e.substr(c + 1).c_str()));
        p = q == std::string::npos ? l.size() : q + 1;
      }
    } else
      usage();
  }
  if (O.reps < 1) O.reps = 1;
  auto has = [](const char *w) {
    return ("," + O.workloads + ",").find("," + std::string(w) + ",") != std::string::npos;
  };
  bool firstpass = has("firstpass");
  if (firstpass && O.workloads != "firstpass") {
    fprintf(stderr, "ab_bench: firstpass runs alone (it needs a heap nothing has allocated from)\n");
    return 2;
  }
#ifdef DM_BENCH_DEVMALLOC
  if (O.grow && !strcmp(variant, "devmalloc")) variant = "devmalloc-grow";
#else
  if (O.grow) usage();
#endif
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    fprintf(stderr, "ab_bench: no CUDA GPU found: the A/B benchmark needs one\n");
    return 2;
  }
  CK(cudaFree(0));
  cudaEventCreate(&ev0);
  cudaEventCreate(&ev1);
  CK(cudaMalloc(&dctr, 4 * sizeof *dctr));
  /* heap set-up, timed: devmalloc builds its heap now; stock only records the
   * limit (its heap appears at the first launch that uses malloc). */
  float init_ms = timed([&] {
#ifdef DM_BENCH_DEVMALLOC
    if (O.shim_heap)
      CK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, O.heap));
    else if (O.grow) {
      devmalloc_grow_config_t g = {};
      g.max = O.heap;
      g.initial = O.grow_initial;
      g.step = O.grow_step;
      CK(devmalloc_cuda_init_growing(&g));
    } else
      CK(devmalloc_cuda_init(O.heap));
    if (O.dense && !O.shim_heap && devmalloc_heap_set_dense(devmalloc_cuda_heap(), 1) != DEVMALLOC_OK) {
      fprintf(stderr, "ab_bench: --dense could not be set\n");
      exit(3);
    }
#else
    CK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, O.heap));
#endif
  });
  if (has("init")) row("init", O.heap, 0, "heap-setup", init_ms, 0, 0);
  if (firstpass)
    wl_firstpass();
  else {
    /* first launch that uses malloc (stock creates its heap here) */
    void **p = ptrs(1024);
    float ms = timed([&] { k_alloc<<<4, 256>>>(p, 1024, 16); });
    k_free<<<4, 256>>>(p, 1024);
    CK(cudaDeviceSynchronize());
    if (has("init")) row("init", O.heap, 1024, "first-malloc-kernel", ms, 1024, 0);
  }
  if (has("sizes")) wl_sizes();
  if (has("scaling")) wl_scaling();
  if (has("mixed")) wl_mixed();
  if (has("divergent")) wl_divergent();
  if (has("churn")) wl_churn();
  if (has("graph")) wl_graph();
  if (has("util")) wl_util();
  if (has("limit")) wl_limit();
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
#ifdef DM_BENCH_DEVMALLOC
  if (O.grow) { /* the size a fixed heap needs to compare with (bench/grow_ab.sh) */
    devmalloc_stats_t s;
    if (devmalloc_heap_stats(devmalloc_cuda_heap(), &s) == DEVMALLOC_OK)
      fprintf(stderr, "ab_bench: heap that grows: mapped peak %llu bytes\n",
              (unsigned long long)s.mapped_peak);
  }
#endif
  return 0;
}
