/*
 * ab_workloads.cuh — the A/B benchmark's workloads (--workloads): each times
 * its kernels (ab_kernels.cuh) with ab_bench.cu's harness and writes its CSV
 * rows. Part of ab_bench.cu's translation unit (included there, after the
 * harness); single-threaded on the host.
 */
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
