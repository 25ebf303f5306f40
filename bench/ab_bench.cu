/*
 * ab_bench.cu — the A/B benchmark's workloads. Built twice from this one
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

/* ---------------------------------------------------------- kernels --- */
__device__ __forceinline__ uint32_t hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}
__device__ __forceinline__ size_t gtid() { return blockIdx.x * (size_t)blockDim.x + threadIdx.x; }

__global__ void k_alloc(void **ptrs, size_t n, size_t size) {
  size_t i = gtid();
  if (i >= n) return;
  void *p = malloc(size);
  if (p) *(volatile uint32_t *)p = (uint32_t)i;
  ptrs[i] = p;
}
__global__ void k_free(void **ptrs, size_t n) {
  size_t i = gtid();
  if (i < n) free(ptrs[i]);
}
__global__ void k_pair(size_t n, size_t size, unsigned long long *fails) {
  size_t i = gtid();
  if (i >= n) return;
  void *p = malloc(size);
  if (!p) {
    atomicAdd(fails, 1ull);
    return;
  }
  *(volatile uint32_t *)p = (uint32_t)i;
  free(p);
}
/* The limit of any allocator on these kernels' shapes: a per-warp bump
 * allocator (one atomic per warp, no reuse; the region wraps, since only the
 * one write per block matters) and a free that does nothing. */
__device__ unsigned long long d_bump;
__device__ char *d_bump_pool;
__device__ unsigned long long d_bump_mask; /* region bytes - 1 (a power of two) */
__device__ __forceinline__ void *bump_malloc(size_t size) {
  unsigned mask = __activemask(), lane = threadIdx.x & 31u, leader = (unsigned)__ffs(mask) - 1u;
  unsigned rank = (unsigned)__popc(mask & ((1u << lane) - 1u)), k = (unsigned)__popc(mask);
  unsigned long long step = (size + 15u) & ~15ull, base = 0;
  if (lane == leader) base = atomicAdd(&d_bump, step * k);
  base = __shfl_sync(mask, base, (int)leader);
  return d_bump_pool + ((base + rank * step) & d_bump_mask);
}
__global__ void k_limit_alloc(void **ptrs, size_t n, size_t size) {
  size_t i = gtid();
  if (i >= n) return;
  void *p = bump_malloc(size);
  *(volatile uint32_t *)p = (uint32_t)i;
  ptrs[i] = p;
}
__global__ void k_limit_free(void **ptrs, size_t n) {
  size_t i = gtid();
  if (i >= n) return;
  void *p = ptrs[i];
  asm volatile("" : : "l"(p)); /* read, then nothing: the no-op free */
}
__global__ void k_limit_pair(size_t n, size_t size) {
  size_t i = gtid();
  if (i >= n) return;
  void *p = bump_malloc(size);
  *(volatile uint32_t *)p = (uint32_t)i;
}
__global__ void k_count_null(void **ptrs, size_t n, unsigned long long *nulls) {
  size_t i = gtid();
  if (i < n && !ptrs[i]) atomicAdd(nulls, 1ull);
}
/* mixed sizes 16..4096 */
__global__ void k_alloc_mixed(void **ptrs, size_t n, uint32_t seed) {
  size_t i = gtid();
  if (i >= n) return;
  size_t size = 16 + hash32((uint32_t)i ^ seed) % 4081;
  void *p = malloc(size);
  if (p) *(volatile uint32_t *)p = (uint32_t)i;
  ptrs[i] = p;
}
/* a random half of the lanes allocate */
__global__ void k_alloc_half(void **ptrs, size_t n, size_t size, uint32_t seed) {
  size_t i = gtid();
  if (i >= n) return;
  ptrs[i] = 0;
  if (hash32((uint32_t)i ^ seed) & 1u) return;
  void *p = malloc(size);
  if (p) *(volatile uint32_t *)p = (uint32_t)i;
  ptrs[i] = p;
}
__device__ __forceinline__ unsigned long long globaltimer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
/* allocate until NULL (or the deadline: next[2] is set then); slots get every block */
__global__ void k_fill(void **slots, unsigned long long cap, unsigned long long *next, size_t size, int mixed,
                       unsigned long long deadline_ns) {
  uint32_t r = hash32((uint32_t)gtid() + 17u);
  for (;;) {
    if (globaltimer_ns() > deadline_ns) {
      next[2] = 1;
      return;
    }
    size_t s = size;
    if (mixed) {
      r = hash32(r);
      s = 16 + r % 4081;
    }
    void *p = malloc(s);
    if (!p) return;
    unsigned long long i = atomicAdd(next, 1ull);
    if (i >= cap) {
      free(p);
      return;
    }
    slots[i] = p;
    atomicAdd(next + 1, (unsigned long long)s);
  }
}
__global__ void k_now(unsigned long long *t) { *t = globaltimer_ns(); }
/* churn: each thread keeps 8 live blocks and replaces one per round */
__global__ void k_churn(size_t n, int rounds, unsigned long long *fails) {
  size_t i = gtid();
  if (i >= n) return;
  void *live[8] = {0};
  uint32_t r = hash32((uint32_t)i * 7u + 1u);
  for (int k = 0; k < rounds; k++) {
    r = hash32(r);
    int j = r & 7;
    if (live[j]) free(live[j]);
    size_t s = 16 + (r >> 8) % 1009;
    live[j] = malloc(s);
    if (live[j])
      *(volatile uint32_t *)live[j] = r;
    else
      atomicAdd(fails, 1ull);
  }
  for (int j = 0; j < 8; j++) free(live[j]);
}
/* dynamic graph: every vertex grows an adjacency list by doubling */
__global__ void k_graph(size_t n, int edges, unsigned long long *fails, unsigned long long *sum) {
  size_t v = gtid();
  if (v >= n) return;
  uint32_t cap = 2, len = 0;
  uint32_t *adj = (uint32_t *)malloc(cap * sizeof(uint32_t));
  if (!adj) {
    atomicAdd(fails, 1ull);
    return;
  }
  uint32_t r = hash32((uint32_t)v);
  for (int e = 0; e < edges; e++) {
    if (len == cap) {
      uint32_t *bigger = (uint32_t *)malloc(2 * cap * sizeof(uint32_t));
      if (!bigger) {
        atomicAdd(fails, 1ull);
        break;
      }
      for (uint32_t k = 0; k < len; k++) bigger[k] = adj[k];
      free(adj);
      adj = bigger;
      cap *= 2;
    }
    r = hash32(r);
    adj[len++] = r % (uint32_t)n;
  }
  unsigned long long s = 0;
  for (uint32_t k = 0; k < len; k++) s += adj[k];
  atomicAdd(sum, s);
  free(adj);
}

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

/* alloc / free / pair for one size and thread count. A first, untimed round
 * warms up; when a kernel takes longer than --max-seconds the thread count
 * is reduced (and the row says so) so that the run stays bounded. */
static void run_size(const char *wl, size_t size, size_t n) {
  char note[64] = "";
  void **p = ptrs(n);
  /* pilot on at most 16K threads: estimate the full kernel's time first */
  size_t n0 = std::min<size_t>(n, 16384);
  float ms0 = timed([&] { k_alloc<<<blocks(n0), 256>>>(p, n0, size); });
  if (O.first) { /* in a process of its own, the first kernel meets an empty heap */
    zero_ctrs();
    k_count_null<<<blocks(n0), 256>>>(p, n0, dctr);
    unsigned long long nulls = read_ctr(0);
    row(wl, size, n0, "first", ms0, (double)(n0 - nulls), nulls, "");
  }
  k_free<<<blocks(n0), 256>>>(p, n0);
  CK(cudaDeviceSynchronize());
  double est = ms0 * ((double)n / n0);
  if (est > O.max_seconds * 1000 && n > n0) {
    size_t m = std::max<size_t>(1024, (size_t)(n0 * (O.max_seconds * 500.0 / std::max(ms0, 0.001f))));
    m = std::min(m, n);
    snprintf(note, sizeof note, "threads reduced from %zu", n);
    n = m;
  }
  float ms = est;
  std::vector<float> ta, tf, tp;
  unsigned long long fails = 0, pfails = 0;
  int reps = ms > 1000 ? 1 : O.reps;
  for (int r = 0; r < reps; r++) {
    ta.push_back(timed([&] { k_alloc<<<blocks(n), 256>>>(p, n, size); }));
    zero_ctrs();
    k_count_null<<<blocks(n), 256>>>(p, n, dctr);
    fails = std::max(fails, read_ctr(0));
    tf.push_back(timed([&] { k_free<<<blocks(n), 256>>>(p, n); }));
    zero_ctrs();
    tp.push_back(timed([&] { k_pair<<<blocks(n), 256>>>(n, size, dctr); }));
    pfails = std::max(pfails, read_ctr(0));
  }
  row(wl, size, n, "alloc", median(ta), (double)(n - fails), fails, note);
  row(wl, size, n, "free", median(tf), (double)(n - fails), 0, note);
  row(wl, size, n, "pair", median(tp), (double)(n - pfails), pfails, note);
}

/* Threads for a kernel whose time grows with its thread count: time `run`
 * on at most 16K threads and reduce n so that one run stays under
 * --max-seconds (the note says so). */
template <typename F> static size_t capped(size_t n, F run, char *note, size_t notelen) {
  size_t n0 = std::min<size_t>(n, 16384);
  float ms0 = timed([&] { run(n0); });
  CK(cudaDeviceSynchronize());
  double est = ms0 * ((double)n / n0);
  if (est <= O.max_seconds * 1000 || n <= n0) return n;
  size_t m = std::max<size_t>(1024, (size_t)(n0 * (O.max_seconds * 500.0 / std::max(ms0, 0.001f))));
  snprintf(note, notelen, "threads reduced from %zu", n);
  return std::min(m, n);
}

static size_t threads_for(size_t size, size_t want) {
  size_t lim = O.heap / 2 / size;
  return std::max<size_t>(32, std::min(want, lim));
}
/* The thread count of --sizes entry i: SIZE:THREADS as given (whether or not
 * it fits: failures are counted), else --threads capped to half the heap. */
static size_t entry_threads(size_t i, size_t size) {
  return O.size_threads[i] ? O.size_threads[i] : threads_for(size, O.threads);
}

static void wl_sizes() {
  if (!O.sizes.empty()) {
    for (size_t i = 0; i < O.sizes.size(); i++) run_size("sizes", O.sizes[i], entry_threads(i, O.sizes[i]));
    return;
  }
  std::vector<size_t> sizes;
  for (size_t s = 16; s <= (1u << 20); s *= 2) sizes.push_back(s);
  for (size_t s : {24, 100, 3000, 5000}) sizes.push_back(s);
  for (size_t s : sizes) run_size("sizes", s, threads_for(s, O.threads));
}

/* The limit rows (workload "limit"): the sizes of the peer's table, the same
 * thread counts and timing as run_size, over bump_malloc and a no-op free. */
static void wl_limit() {
  const unsigned long long region = 1ull << 30;
  static char *pool;
  if (!pool) {
    CK(cudaMalloc(&pool, region));
    unsigned long long m = region - 1;
    CK(cudaMemcpyToSymbol(d_bump_pool, &pool, sizeof pool));
    CK(cudaMemcpyToSymbol(d_bump_mask, &m, sizeof m));
  }
  for (size_t size : {16, 64, 256, 1024, 4096, 16384}) {
    size_t n = threads_for(size, O.threads);
    void **p = ptrs(n);
    std::vector<float> ta, tf, tp;
    for (int r = 0; r <= O.reps; r++) { /* r == 0: warm-up */
      float a = timed([&] { k_limit_alloc<<<blocks(n), 256>>>(p, n, size); });
      float f = timed([&] { k_limit_free<<<blocks(n), 256>>>(p, n); });
      float q = timed([&] { k_limit_pair<<<blocks(n), 256>>>(n, size); });
      if (r) {
        ta.push_back(a);
        tf.push_back(f);
        tp.push_back(q);
      }
    }
    row("limit", size, n, "alloc", median(ta), (double)n, 0, "");
    row("limit", size, n, "free", median(tf), (double)n, 0, "");
    row("limit", size, n, "pair", median(tp), (double)n, 0, "");
  }
}

static void wl_scaling() {
  for (size_t s : {16, 1024})
    for (size_t n = 32; n <= (4u << 20); n *= 4) run_size("scaling", s, threads_for(s, n));
}

static void two_phase(const char *wl, size_t size, size_t n, bool mixed) {
  void **p = ptrs(n);
  char note[64] = "";
  n = capped(
      n,
      [&](size_t m) {
        if (mixed)
          k_alloc_mixed<<<blocks(m), 256>>>(p, m, 7u);
        else
          k_alloc_half<<<blocks(m), 256>>>(p, m, size, 7u);
        k_free<<<blocks(m), 256>>>(p, m);
      },
      note, sizeof note);
  std::vector<float> ta, tf;
  unsigned long long allocated = 0;
  for (int r = 0; r <= O.reps; r++) { /* r == 0: warm-up */
    float a = timed([&] {
      if (mixed)
        k_alloc_mixed<<<blocks(n), 256>>>(p, n, 1234u + r);
      else
        k_alloc_half<<<blocks(n), 256>>>(p, n, size, 99u + r);
    });
    zero_ctrs();
    k_count_null<<<blocks(n), 256>>>(p, n, dctr);
    allocated = n - read_ctr(0);
    float f = timed([&] { k_free<<<blocks(n), 256>>>(p, n); });
    if (r) {
      ta.push_back(a);
      tf.push_back(f);
    }
  }
  /* Divergent: about half the lanes ask, so NULLs are not counted as failures. */
  row(wl, size, n, "alloc", median(ta), (double)allocated, mixed ? n - allocated : 0, note);
  row(wl, size, n, "free", median(tf), (double)allocated, 0, note);
}

static void wl_mixed() { two_phase("mixed", 0, threads_for(4096, O.threads), true); }
static void wl_divergent() {
  for (size_t s : {16, 1024}) two_phase("divergent", s, threads_for(s, O.threads), false);
}

static void wl_churn() {
  size_t n = std::min<size_t>(O.threads, O.heap / 2 / (8 * 1024));
  int rounds = 16;
  char note[96] = "";
  n = capped(
      n, [&](size_t m) { k_churn<<<blocks(m), 256>>>(m, rounds, dctr); }, note, sizeof note);
  std::vector<float> t;
  unsigned long long fails = 0;
  for (int r = 0; r <= O.reps; r++) {
    zero_ctrs();
    float ms = timed([&] { k_churn<<<blocks(n), 256>>>(n, rounds, dctr); });
    if (r) t.push_back(ms);
    fails = read_ctr(0);
    if (ms > O.max_seconds * 1000) break;
  }
  if (t.empty()) t.push_back(0);
  row("churn", 0, n, "alloc+free", median(t), (double)n * rounds, fails,
      note[0] ? note : "ops = malloc+free pairs");
}

static void wl_graph() {
  size_t n = std::min<size_t>(O.threads / 4, O.heap / 2 / 4096);
  int edges = 256;
  char note[96] = "";
  n = capped(
      n, [&](size_t m) { k_graph<<<blocks(m), 256>>>(m, edges, dctr, dctr + 1); }, note, sizeof note);
  std::vector<float> t;
  unsigned long long fails = 0;
  for (int r = 0; r <= O.reps; r++) {
    zero_ctrs();
    float ms = timed([&] { k_graph<<<blocks(n), 256>>>(n, edges, dctr, dctr + 1); });
    if (r) t.push_back(ms);
    fails = read_ctr(0);
    if (ms > O.max_seconds * 1000) break;
  }
  if (t.empty()) t.push_back(0);
  /* each vertex: 1 + log2(edges/2) mallocs, as many frees */
  double ops = (double)n * (1 + 7);
  row("graph", 4, n, "grow-by-doubling", median(t), ops, fails, note[0] ? note : "ops = malloc+free pairs");
}

/* First pass: the first alloc kernel of mixed sizes 16..4096 (no --sizes) or
 * of each --sizes entry, on a heap nothing has allocated from: firstpass
 * runs alone, right after the heap set-up (main skips its first-malloc
 * kernel), so for the first entry no class has a chunk yet. A launch with no
 * allocating thread loads the kernel first (lazy module loading is not the
 * allocator's cost). Then the blocks are freed and --reps more passes run
 * (each freed). Rows: alloc-first (that first kernel), alloc-second (the
 * pass after it alone) and alloc-steady (the median of the passes after
 * it); same threads as the mixed and sizes rows. */
static void wl_firstpass() {
  std::vector<size_t> sizes = O.sizes.empty() ? std::vector<size_t>{0} : O.sizes;
  for (size_t i = 0; i < sizes.size(); i++) {
    size_t s = sizes[i];
    size_t n = O.sizes.empty() ? threads_for(4096, O.threads) : entry_threads(i, s);
    void **p = ptrs(n);
    auto alloc = [&](size_t m, uint32_t seed) {
      unsigned g = m ? blocks(m) : 1;
      if (s)
        k_alloc<<<g, 256>>>(p, m, s);
      else
        k_alloc_mixed<<<g, 256>>>(p, m, seed);
    };
    alloc(0, 0);
    CK(cudaDeviceSynchronize());
    std::vector<float> t;
    unsigned long long first_fails = 0, second_fails = 0, fails = 0;
    for (int r = 0; r <= O.reps; r++) {
      t.push_back(timed([&] { alloc(n, 1234u + r); }));
      zero_ctrs();
      k_count_null<<<blocks(n), 256>>>(p, n, dctr);
      unsigned long long f = read_ctr(0);
      if (r == 0)
        first_fails = f;
      else
        fails = std::max(fails, f);
      if (r == 1) second_fails = f;
      k_free<<<blocks(n), 256>>>(p, n);
      CK(cudaDeviceSynchronize());
      if (t.back() > O.max_seconds * 1000) break;
    }
    row("firstpass", s, n, "alloc-first", t[0], (double)(n - first_fails), first_fails);
    if (t.size() > 1) /* the second pass alone: what a harness that reports first and second passes sees */
      row("firstpass", s, n, "alloc-second", t[1], (double)(n - second_fails), second_fails);
    t.erase(t.begin());
    if (t.empty())
      row("firstpass", s, n, "alloc-steady", 0, 0, 0, "not run: the first pass passed the time cap");
    else
      row("firstpass", s, n, "alloc-steady", median(t), (double)(n - fails), fails);
  }
}

/* Fill the heap with one size until NULL; utilization = bytes granted / heap.
 * The fills: powers of four from 16 B to 1 MiB, then mixed 16..4096 B, in one
 * process; or those --sizes names ("mixed" among them), e.g. mixed alone on a
 * fresh heap. */
static void wl_util() {
  std::vector<size_t> sizes = O.sizes;
  if (sizes.empty()) {
    for (size_t s = 16; s <= (1u << 20); s *= 4) sizes.push_back(s);
    sizes.push_back(0); /* mixed 16..4096 */
  }
  for (size_t s : sizes) {
    unsigned long long cap = O.heap / 16 + 1024;
    cap = std::min<unsigned long long>(cap, 64ull << 20);
    void **slots;
    CK(cudaMalloc(&slots, cap * sizeof(void *)));
    zero_ctrs();
    size_t n = std::min<size_t>(O.threads, 65536);
    unsigned long long t0 = 0;
    { /* the GPU's clock, for the deadline */
      unsigned long long *d;
      CK(cudaMalloc(&d, sizeof *d));
      k_now<<<1, 1>>>(d);
      CK(cudaMemcpy(&t0, d, sizeof t0, cudaMemcpyDeviceToHost));
      CK(cudaFree(d));
    }
    unsigned long long deadline = t0 + (unsigned long long)(O.max_seconds * 10 * 1e9);
    float ms = timed([&] { k_fill<<<blocks(n), 256>>>(slots, cap, dctr, s ? s : 16, s == 0, deadline); });
    unsigned long long got = std::min(read_ctr(0), cap), bytes = read_ctr(1), late = read_ctr(2);
    k_free<<<blocks(got), 256>>>(slots, got);
    CK(cudaDeviceSynchronize());
    char note[96];
    snprintf(note, sizeof note, "utilization %.1f%% %s", 100.0 * bytes / O.heap,
             late ? "stopped-at-time-limit" : "ended-at-NULL");
    row("util", s, n, "fill-until-NULL", ms, (double)got, 0, note);
    CK(cudaFree(slots));
  }
}

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
