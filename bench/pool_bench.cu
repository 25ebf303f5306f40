/*
 * pool_bench.cu — host-side allocate/free latency: the MAM host pool vs
 * cudaMalloc/cudaFree vs cudaMallocAsync/cudaFreeAsync, in one run.
 *
 *   pool_bench OUTDIR [--quick] [--reps N] [--max-live N] [--pool-bytes SIZE]
 *
 * Experiment "sizes": for sizes 1 B .. 1 GiB, REPS times allocate then free
 * one block; latency of each call (ns): p50, p99, mean of alloc, free and
 * the pair. Experiment "live": with N = 10 .. 1M live segments of 1..10 B
 * (as in the MAM paper), the latency of one more allocate+free (200 pairs),
 * plus the mean cost of filling and draining the N segments.
 *
 * Allocators (column `allocator`):
 *   cudaMalloc    cudaMalloc / cudaFree
 *   async         cudaMallocAsync / cudaFreeAsync on one stream, default
 *                 memory pool with release threshold UINT64_MAX (no sync)
 *   pool          the shim's pool path, called directly (dm_pool_mem_alloc /
 *                 dm_pool_mem_free over the real cuMemAlloc_v2/cuMemFree_v2),
 *                 DEVMALLOC_HOST_POOL=SIZE, free synchronizes the context as
 *                 cuMemFree does (the default)
 *   pool_nosync   the same with DEVMALLOC_HOST_POOL_SYNC=0
 *
 * Output: OUTDIR/pool_sizes.csv, OUTDIR/pool_live.csv
 * (allocator,size|live,op,reps,p50_ns,p99_ns,mean_ns), OUTDIR/pool_meta.txt.
 * Plot: python3 bench/plot_pool.py OUTDIR
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

extern "C" {
#include "pool_glue.h"
#include "pool_hooks.h"
}

enum { A_CUDAMALLOC, A_ASYNC, A_POOL, A_POOL_NOSYNC, A_N };
static const char *a_name[A_N] = {"cudaMalloc", "async", "pool", "pool_nosync"};
static cudaStream_t g_stream;
static const char *g_pool_bytes = "4G";

static inline uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void select_alloc(int a) {
  if (a == A_POOL) dm_pool_hooks_configure(g_pool_bytes, 1);
  if (a == A_POOL_NOSYNC) dm_pool_hooks_configure(g_pool_bytes, 0);
}

static int do_alloc(int a, void **p, size_t n) {
  switch (a) {
  case A_CUDAMALLOC: return cudaMalloc(p, n) == cudaSuccess ? 0 : -1;
  case A_ASYNC: return cudaMallocAsync(p, n, g_stream) == cudaSuccess ? 0 : -1;
  default: {
    CUdeviceptr d = 0;
    if (dm_pool_mem_alloc(&d, n, cuMemAlloc_v2) != CUDA_SUCCESS) return -1;
    *p = (void *)(uintptr_t)d;
    return 0;
  }
  }
}

static int do_free(int a, void *p) {
  switch (a) {
  case A_CUDAMALLOC: return cudaFree(p) == cudaSuccess ? 0 : -1;
  case A_ASYNC: return cudaFreeAsync(p, g_stream) == cudaSuccess ? 0 : -1;
  default: return dm_pool_mem_free((CUdeviceptr)(uintptr_t)p, cuMemFree_v2) == CUDA_SUCCESS ? 0 : -1;
  }
}

static int cmp_u64(const void *x, const void *y) {
  uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return a < b ? -1 : a > b;
}

static void row(FILE *f, int a, uint64_t key, const char *op, uint64_t *v, size_t n) {
  if (n == 0) {
    fprintf(f, "%s,%llu,%s,0,,,\n", a_name[a], (unsigned long long)key, op);
    return;
  }
  qsort(v, n, sizeof *v, cmp_u64);
  double mean = 0;
  for (size_t i = 0; i < n; i++) mean += (double)v[i];
  mean /= (double)n;
  uint64_t p50 = v[n / 2], p99 = v[(size_t)((double)(n - 1) * 0.99)];
  fprintf(f, "%s,%llu,%s,%zu,%llu,%llu,%.0f\n", a_name[a], (unsigned long long)key, op, n,
          (unsigned long long)p50, (unsigned long long)p99, mean);
  printf("  %-12s %12llu %-10s p50 %10llu ns  p99 %10llu ns  mean %10.0f ns  (n=%zu)\n", a_name[a],
         (unsigned long long)key, op, (unsigned long long)p50, (unsigned long long)p99, mean, n);
}

static void bench_sizes(FILE *f, int reps) {
  static const size_t sizes[] = {1, 16, 256, 4096, 65536, 1 << 20, 16 << 20, 256 << 20, 1u << 30};
  uint64_t *ta = (uint64_t *)malloc(sizeof(uint64_t) * reps);
  uint64_t *tf = (uint64_t *)malloc(sizeof(uint64_t) * reps);
  uint64_t *tp = (uint64_t *)malloc(sizeof(uint64_t) * reps);
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
    size_t n = sizes[si];
    int r = n >= (256u << 20) ? (reps < 50 ? reps : 50) : reps;
    for (int a = 0; a < A_N; a++) {
      select_alloc(a);
      size_t k = 0;
      for (int i = -3; i < r; i++) { /* 3 warm-up rounds */
        void *p = NULL;
        uint64_t t0 = now_ns();
        if (do_alloc(a, &p, n)) {
          fprintf(stderr, "%s: alloc %zu failed\n", a_name[a], n);
          break;
        }
        uint64_t t1 = now_ns();
        do_free(a, p);
        uint64_t t2 = now_ns();
        if (i >= 0) {
          ta[k] = t1 - t0;
          tf[k] = t2 - t1;
          tp[k] = t2 - t0;
          k++;
        }
      }
      if (a == A_ASYNC) cudaStreamSynchronize(g_stream);
      row(f, a, n, "alloc", ta, k);
      row(f, a, n, "free", tf, k);
      row(f, a, n, "pair", tp, k);
    }
  }
  free(ta);
  free(tf);
  free(tp);
}

static void bench_live(FILE *f, size_t max_live) {
  enum { K = 200 };
  void **v = (void **)malloc(sizeof(void *) * max_live);
  uint64_t ta[K], tf[K], tp[K];
  uint64_t seed = 12345;
  for (size_t live = 10; live <= max_live; live *= 10) {
    for (int a = 0; a < A_N; a++) {
      select_alloc(a);
      size_t got = 0;
      uint64_t t0 = now_ns();
      for (; got < live; got++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        if (do_alloc(a, &v[got], 1 + (seed >> 33) % 10)) break;
      }
      uint64_t fill = now_ns() - t0;
      if (got < live) fprintf(stderr, "%s: only %zu of %zu live segments\n", a_name[a], got, live);
      size_t k = 0;
      for (int i = -3; i < K; i++) {
        void *p;
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t s0 = now_ns();
        if (do_alloc(a, &p, 1 + (seed >> 33) % 10)) break;
        uint64_t s1 = now_ns();
        do_free(a, p);
        uint64_t s2 = now_ns();
        if (i >= 0) {
          ta[k] = s1 - s0;
          tf[k] = s2 - s1;
          tp[k] = s2 - s0;
          k++;
        }
      }
      t0 = now_ns();
      for (size_t i = 0; i < got; i++) do_free(a, v[i]);
      uint64_t drain = now_ns() - t0;
      if (a == A_ASYNC) cudaStreamSynchronize(g_stream);
      row(f, a, live, "alloc", ta, k);
      row(f, a, live, "free", tf, k);
      row(f, a, live, "pair", tp, k);
      uint64_t mf = got ? fill / got : 0, md = got ? drain / got : 0;
      fprintf(f, "%s,%zu,fill_mean,%zu,%llu,%llu,%llu\n", a_name[a], live, got, (unsigned long long)mf,
              (unsigned long long)mf, (unsigned long long)mf);
      fprintf(f, "%s,%zu,drain_mean,%zu,%llu,%llu,%llu\n", a_name[a], live, got, (unsigned long long)md,
              (unsigned long long)md, (unsigned long long)md);
      printf("  %-12s %12zu fill %llu ns/op, drain %llu ns/op\n", a_name[a], live, (unsigned long long)mf,
             (unsigned long long)md);
    }
  }
  free(v);
}

int main(int argc, char **argv) {
  if (argc < 2 || argv[1][0] == '-') {
    fprintf(stderr, "usage: %s OUTDIR [--quick] [--reps N] [--max-live N] [--pool-bytes SIZE]\n", argv[0]);
    return 2;
  }
  const char *dir = argv[1];
  int reps = 200;
  size_t max_live = 1000000;
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) {
      reps = 20;
      max_live = 1000;
    } else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--max-live") && i + 1 < argc)
      max_live = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--pool-bytes") && i + 1 < argc)
      g_pool_bytes = argv[++i];
    else {
      fprintf(stderr, "unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  if (reps < 1) reps = 1;
  if (mkdir(dir, 0755) && errno != EEXIST) {
    perror(dir);
    return 1;
  }
  if (cudaFree(0) != cudaSuccess) {
    fprintf(stderr, "no CUDA device\n");
    return 1;
  }
  cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking);
  cudaMemPool_t mp;
  int dev = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetDefaultMemPool(&mp, dev);
  uint64_t thr = UINT64_MAX;
  cudaMemPoolSetAttribute(mp, cudaMemPoolAttrReleaseThreshold, &thr);

  char path[4096];
  snprintf(path, sizeof path, "%s/pool_meta.txt", dir);
  FILE *m = fopen(path, "w");
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, dev);
  int drv = 0, rt = 0;
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  if (m) {
    fprintf(m, "device %s\ndriver %d\nruntime %d\nreps %d\nmax_live %zu\npool_bytes %s\n", prop.name, drv, rt,
            reps, max_live, g_pool_bytes);
    fclose(m);
  }

  /* Pool creation (the lazy first chunk) timed once. */
  dm_pool_hooks_configure(g_pool_bytes, 1);
  void *p;
  uint64_t t0 = now_ns();
  if (do_alloc(A_POOL, &p, 1)) {
    fprintf(stderr, "pool: first allocation failed\n");
    return 1;
  }
  uint64_t init = now_ns() - t0;
  do_free(A_POOL, p);
  printf("pool init (first chunk of %s): %.3f ms\n", g_pool_bytes, init / 1e6);

  snprintf(path, sizeof path, "%s/pool_sizes.csv", dir);
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    return 1;
  }
  fprintf(f, "allocator,size,op,reps,p50_ns,p99_ns,mean_ns\n");
  fprintf(f, "pool,0,init,1,%llu,%llu,%llu\n", (unsigned long long)init, (unsigned long long)init,
          (unsigned long long)init);
  printf("== sizes\n");
  bench_sizes(f, reps);
  fclose(f);

  snprintf(path, sizeof path, "%s/pool_live.csv", dir);
  f = fopen(path, "w");
  if (!f) {
    perror(path);
    return 1;
  }
  fprintf(f, "allocator,live,op,reps,p50_ns,p99_ns,mean_ns\n");
  printf("== live segments\n");
  bench_live(f, max_live);
  fclose(f);

  dm_pool_print_stats(stdout);
  dm_pool_hooks_shutdown();
  cudaStreamDestroy(g_stream);
  printf("wrote %s/pool_sizes.csv, %s/pool_live.csv\n", dir, dir);
  return 0;
}
