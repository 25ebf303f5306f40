/*
 * dm_soak.cu — load held for a long time: kernels allocate in one launch and
 * free in another, mixed sizes 1 B .. 4 MiB, four streams and a CUDA graph,
 * a heap that grows and is trimmed. Every period the program stops,
 * synchronizes and checks what it holds: no two live blocks overlap, every
 * block still carries its pattern, and (relinked build) the heap's counters
 * agree with it (allocations = frees + live) and the heap's own check finds
 * nothing wrong; when everything is freed at the end the heap is whole.
 *
 *   dm_soak SECONDS [PERIOD_S] [SLOTS]
 *
 * Relinked build: a heap from devmalloc_cuda_init_growing (8 GiB at most),
 * trimmed after each check. -DPLAIN: the same kernels as a plain program
 * (no devmalloc calls; run under the shim with DEVMALLOC_GROW=1, whose stats
 * at exit the case compares with the totals printed here).
 * Prints "soak: N checks, A allocations, F frees, 0 NULL, ..." last; exit 0
 * when every check passed and no request below capacity got NULL
 * (SOAK_NULLS_OK=1: NULLs are counted, not failed; for runs under a
 * sanitizer, whose slowdown outlasts the allocator's bounded waits).
 */
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#ifndef PLAIN
#include "devmalloc_cuda.h"
#else
#include <cuda_runtime.h>
#endif

#include "pass_fail.h" /* CK */
#include "hash32.h"

#define STREAMS 4
#define MAX_LARGE (4u << 20)

struct slot_t {
  char *p;
  unsigned long long size;
  unsigned tag;
  unsigned pad;
};
struct ctr_t {
  unsigned long long allocs, frees, nulls, bad;
};

/* 1 B .. 4 KiB mostly; 1 in 64 up to 64 KiB; 1 in 1024 up to 4 MiB */
__device__ static unsigned long long pick(unsigned r) {
  unsigned k = hash32(r ^ 0x9e3779b9u);
  if ((k & 1023u) == 0) return 1 + hash32(k) % MAX_LARGE;
  if ((k & 63u) == 0) return 1 + hash32(k) % 65536u;
  return 1 + hash32(k) % 4096u;
}
__device__ static void stamp(char *p, unsigned long long size, unsigned tag) {
  p[0] = (char)tag;
  if (size > 1) p[size - 1] = (char)(tag >> 8);
  if (size >= 16) *(unsigned *)(((unsigned long long)p + 4) & ~3ull) = tag;
}
__device__ static bool intact(const char *p, unsigned long long size, unsigned tag) {
  if (p[0] != (char)tag || (size > 1 && p[size - 1] != (char)(tag >> 8))) return false;
  return size < 16 || *(const unsigned *)(((unsigned long long)p + 4) & ~3ull) == tag;
}

/* Fill the empty slots of [0, n). */
__global__ void k_alloc(slot_t *s, unsigned n, unsigned round, ctr_t *c) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n || s[i].p) return;
  unsigned tag = hash32(i * 2654435761u + round);
  unsigned long long size = pick(tag);
  char *p = (char *)malloc(size);
  if (!p) {
    atomicAdd(&c->nulls, 1ull);
    return;
  }
  stamp(p, size, tag);
  s[i].p = p;
  s[i].size = size;
  s[i].tag = tag;
  atomicAdd(&c->allocs, 1ull);
}
/* Free about half of the live slots (all with `all`), checking them first. */
__global__ void k_free(slot_t *s, unsigned n, unsigned round, int all, ctr_t *c) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n || !s[i].p) return;
  if (!all && (hash32(i ^ round * 7919u) & 1u)) return;
  if (!intact(s[i].p, s[i].size, s[i].tag)) atomicAdd(&c->bad, 1ull);
  free(s[i].p);
  s[i].p = 0;
  atomicAdd(&c->frees, 1ull);
}

static int check_live(const std::vector<slot_t> &h, char *why, size_t whylen) {
  std::vector<std::pair<unsigned long long, unsigned long long>> v;
  for (const slot_t &s : h)
    if (s.p) v.push_back({(unsigned long long)s.p, s.size});
  std::sort(v.begin(), v.end());
  for (size_t i = 1; i < v.size(); i++)
    if (v[i - 1].first + v[i - 1].second > v[i].first) {
      snprintf(why, whylen, "blocks at %llx (%llu B) and %llx overlap", v[i - 1].first, v[i - 1].second,
               v[i].first);
      return 0;
    }
  return 1;
}

int main(int argc, char **argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 600, period = argc > 2 ? atof(argv[2]) : 5;
  unsigned slots = argc > 3 ? (unsigned)atoi(argv[3]) : 262144u;
#ifndef PLAIN
  devmalloc_grow_config_t cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.max = 8ull << 30;
  CK(devmalloc_cuda_init_growing(&cfg));
  devmalloc_heap_t *heap = devmalloc_cuda_heap();
#else
  CK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 8ull << 30));
#endif
  slot_t *s;
  ctr_t *c;
  CK(cudaMalloc(&s, slots * sizeof *s));
  CK(cudaMemset(s, 0, slots * sizeof *s));
  CK(cudaMallocManaged(&c, sizeof *c));
  memset(c, 0, sizeof *c);
  cudaStream_t st[STREAMS];
  for (int i = 0; i < STREAMS; i++) CK(cudaStreamCreateWithFlags(&st[i], cudaStreamNonBlocking));
  unsigned per = slots / STREAMS, blocks = (per + 255) / 256;
  /* stream 0's round as a graph: allocate, then free half */
  cudaGraph_t g;
  cudaGraphExec_t ge;
  unsigned graph_round = 0x5eed;
  CK(cudaStreamBeginCapture(st[0], cudaStreamCaptureModeGlobal));
  k_alloc<<<blocks, 256, 0, st[0]>>>(s, per, graph_round, c);
  k_free<<<blocks, 256, 0, st[0]>>>(s, per, graph_round, 0, c);
  CK(cudaStreamEndCapture(st[0], &g));
  CK(cudaGraphInstantiate(&ge, g, 0));

  auto t0 = std::chrono::steady_clock::now();
  auto since = [&](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  std::vector<slot_t> h(slots);
  unsigned round = 1, checks = 0, failed = 0;
  char why[256] = "";
  while (since(t0) < seconds) {
    auto tp = std::chrono::steady_clock::now();
    while (since(tp) < period && since(t0) < seconds) {
      for (int i = 0; i < STREAMS; i++) {
        slot_t *mine = s + (size_t)i * per;
        if (i == 0 && round % 4 == 0) {
          CK(cudaGraphLaunch(ge, st[0]));
          continue;
        }
        k_alloc<<<blocks, 256, 0, st[i]>>>(mine, per, round * STREAMS + i, c);
        k_free<<<blocks, 256, 0, st[i]>>>(mine, per, round * STREAMS + i, 0, c);
      }
      CK(cudaGetLastError());
      round++;
      if (round % 8 == 0) CK(cudaDeviceSynchronize());
    }
    CK(cudaDeviceSynchronize());
    checks++;
    CK(cudaMemcpy(h.data(), s, slots * sizeof *s, cudaMemcpyDeviceToHost));
    unsigned long long live = 0;
    for (const slot_t &x : h) live += x.p != 0;
    int ok = check_live(h, why, sizeof why) && !c->bad && c->allocs == c->frees + live;
    if (!ok && !why[0])
      snprintf(why, sizeof why, "%llu damaged, allocs %llu != frees %llu + live %llu", c->bad, c->allocs,
               c->frees, live);
#ifndef PLAIN
    devmalloc_stats_t hs;
    memset(&hs, 0, sizeof hs);
    if (ok && devmalloc_heap_stats(heap, &hs) == DEVMALLOC_OK &&
        (hs.allocs != c->allocs || hs.frees != c->frees || hs.failures != c->nulls)) {
      snprintf(why, sizeof why, "heap counters: allocs %llu frees %llu failures %llu; program %llu %llu %llu",
               (unsigned long long)hs.allocs, (unsigned long long)hs.frees, (unsigned long long)hs.failures,
               c->allocs, c->frees, c->nulls);
      ok = 0;
    }
    int whole = 0;
    char vwhy[200] = "";
    if (ok && devmalloc_heap_verify(heap, &whole, vwhy, sizeof vwhy) != DEVMALLOC_OK) {
      snprintf(why, sizeof why, "heap check: %s", vwhy);
      ok = 0;
    }
    size_t unmapped = 0;
    CK(devmalloc_heap_trim(heap, 0, &unmapped) == DEVMALLOC_OK ? cudaSuccess : cudaErrorUnknown);
    printf("check %u at %.0f s: %llu live, %llu allocs, %llu frees, %llu NULL, %.0f MiB mapped, %zu MiB "
           "trimmed: %s\n",
           checks, since(t0), live, c->allocs, c->frees, c->nulls, hs.mapped_bytes / 1048576.0,
           unmapped >> 20, ok ? "ok" : why);
#else
    printf("check %u at %.0f s: %llu live, %llu allocs, %llu frees, %llu NULL: %s\n", checks, since(t0), live,
           c->allocs, c->frees, c->nulls, ok ? "ok" : why);
#endif
    fflush(stdout);
    if (!ok) failed++;
  }
  for (int i = 0; i < STREAMS; i++) k_free<<<blocks, 256, 0, st[i]>>>(s + (size_t)i * per, per, 0, 1, c);
  CK(cudaDeviceSynchronize());
  int whole = 1;
#ifndef PLAIN
  char vwhy[200] = "";
  if (devmalloc_heap_verify(heap, &whole, vwhy, sizeof vwhy) != DEVMALLOC_OK || !whole) {
    whole = 0;
    fprintf(stderr, "soak: not whole after freeing everything: %s\n", vwhy);
  }
#endif
  printf("soak: %u checks, %u failed, %llu allocations, %llu frees, %llu NULL, %llu damaged, whole at the "
         "end: %s\n",
         checks, failed, c->allocs, c->frees, c->nulls, c->bad, whole ? "yes" : "no");
  const char *nulls_ok = getenv("SOAK_NULLS_OK");
  int null_fails = c->nulls && !(nulls_ok && nulls_ok[0] == '1');
  return failed || null_fails || c->bad || !whole || c->allocs != c->frees ? 1 : 0;
}
