/*
 * dm_suite.cu — the device module's GPU tests (device malloc/free on
 * the GPU). A program relinked with devmalloc (-rdc), heap from
 * devmalloc_cuda_init(). Prints PASS/FAIL lines (tests/gpu/run.sh format).
 *   dm_suite [--quick | --mixed-fill | --small-heap]
 *   --quick: reduced sizes (for compute-sanitizer); --mixed-fill: only the
 *   fill of mixed sizes until NULL, on a fresh 256 MiB heap; --small-heap:
 *   repeated passes of 16 B, 256 B and 1 KiB blocks, then warps asking for
 *   two sizes at once, in a 64 MiB heap (its bins share the pool, so warps
 *   that miss their chunk search for room: slab.c, "Room search")
 */
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <vector>
#include "devmalloc_cuda.h"
#include "pass_fail.h"
#include "hash32.h"

static bool quick = false;
static const char *prefix = ""; /* before each test's name */
static devmalloc_heap_t *heap;
static size_t heap_bytes;

#include <chrono>
static std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();

static void report(bool ok, const char *name, const char *fmt = "", ...) {
  auto now = std::chrono::steady_clock::now();
  double ms = std::chrono::duration<double, std::milli>(now - last).count();
  last = now;
  char detail[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  printf("%s %s%s%s [%.0f ms]\n", ok ? "PASS" : "FAIL", name, detail[0] ? ": " : "", detail, ms);
  if (!ok) failures++;
  fflush(stdout);
}

/* After each test group: the heap's invariants still hold (bisects bugs). */
static void verify_after(const char *what) {
  char why[200] = "";
  CK(cudaDeviceSynchronize());
  devmalloc_status_t st = devmalloc_heap_verify(heap, NULL, why, sizeof why);
  char name[96];
  snprintf(name, sizeof name, "invariants_after_%s", what);
  report(st == DEVMALLOC_OK, name, "%s", why);
}

static devmalloc_stats_t stats() {
  devmalloc_stats_t s;
  CK(cudaDeviceSynchronize());
  devmalloc_heap_stats(heap, &s);
  return s;
}

static bool heap_whole(char *why, size_t n) {
  int whole = 0;
  CK(cudaDeviceSynchronize());
  devmalloc_status_t st = devmalloc_heap_verify(heap, &whole, why, n);
  if (st != DEVMALLOC_OK) return false;
  if (!whole) {
    char held[160];
    snprintf(held, sizeof held, "%s", why);
    snprintf(why, n, "heap not whole after freeing everything: %s", held);
  }
  return whole;
}

/* ------------------------------------------------------------ kernels --- */
__global__ void k_alloc(void **ptrs, size_t n, size_t size) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) ptrs[i] = malloc(size);
}
__global__ void k_alloc_aligned(void **ptrs, size_t n, size_t size, size_t align) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) ptrs[i] = __nv_aligned_device_malloc(size, align);
}
__global__ void k_free(void **ptrs, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) free(ptrs[i]);
}
/* Check placement and alignment; count NULLs and misplaced blocks. */
__global__ void k_check(void **ptrs, size_t n, uintptr_t lo, uintptr_t hi, size_t size, size_t align,
                        unsigned long long *nulls, unsigned long long *bad) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  uintptr_t p = (uintptr_t)ptrs[i];
  if (!p)
    atomicAdd(nulls, 1ull);
  else if (p < lo || p + size > hi || p % align)
    atomicAdd(bad, 1ull);
}
/* Fill (mode 0) or verify (mode 1) every block's every byte group: word j of
 * block i holds i * 2654435761 + j. Blocks smaller than 8 B use bytes. */
__global__ void k_pattern(void **ptrs, size_t n, size_t size, int mode, unsigned long long *bad) {
  size_t words = size / 8, per = words ? words : size;
  size_t total = n * per;
  for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < total;
       t += (size_t)gridDim.x * blockDim.x) {
    size_t i = t / per, j = t % per;
    char *p = (char *)ptrs[i];
    if (!p) continue;
    uint64_t v = i * 2654435761ull + j;
    if (words) {
      uint64_t *w = (uint64_t *)p + j;
      if (mode == 0)
        *w = v;
      else if (*w != v)
        atomicAdd(bad, 1ull);
    } else {
      if (mode == 0)
        p[j] = (char)v;
      else if (p[j] != (char)v)
        atomicAdd(bad, 1ull);
    }
  }
}

static unsigned long long *counters; /* managed: [0] nulls [1] bad */

static unsigned blocks_for(size_t n, unsigned tpb = 256) { return (unsigned)((n + tpb - 1) / tpb); }

/* Allocate n blocks of `size` (aligned entry if align > 0), check, pattern,
 * verify, free, allocate again (reuse), free. */
static void run_size(size_t size, size_t n, size_t align) {
  void **ptrs;
  CK(cudaMalloc(&ptrs, n * sizeof(void *)));
  counters[0] = counters[1] = 0;
  if (align)
    k_alloc_aligned<<<blocks_for(n), 256>>>(ptrs, n, size, align);
  else
    k_alloc<<<blocks_for(n), 256>>>(ptrs, n, size);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  uintptr_t lo = (uintptr_t)0, hi = UINTPTR_MAX;
  k_check<<<blocks_for(n), 256>>>(ptrs, n, lo, hi, size, align > 16 ? align : 16, &counters[0], &counters[1]);
  CK(cudaDeviceSynchronize());
  unsigned long long nulls = counters[0], misplaced = counters[1];
  counters[1] = 0;
  k_pattern<<<4096, 256>>>(ptrs, n, size, 0, &counters[1]);
  k_pattern<<<4096, 256>>>(ptrs, n, size, 1, &counters[1]);
  CK(cudaDeviceSynchronize());
  unsigned long long corrupt = counters[1];
  k_free<<<blocks_for(n), 256>>>(ptrs, n);
  CK(cudaDeviceSynchronize());
  counters[0] = 0;
  k_alloc<<<blocks_for(n), 256>>>(ptrs, n, size);
  k_check<<<blocks_for(n), 256>>>(ptrs, n, lo, hi, size, 16, &counters[0], &counters[1]);
  k_free<<<blocks_for(n), 256>>>(ptrs, n);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  unsigned long long nulls2 = counters[0];
  CK(cudaFree(ptrs));
  char name[96];
  if (align)
    snprintf(name, sizeof name, "%ssize_%zuB_x%zu_align%zu", prefix, size, n, align);
  else
    snprintf(name, sizeof name, "%ssize_%zuB_x%zu", prefix, size, n);
  report(nulls == 0 && misplaced == 0 && corrupt == 0 && nulls2 == 0, name,
         "nulls %llu misplaced/misaligned %llu overlapping/corrupt words %llu nulls-after-reuse %llu", nulls,
         misplaced, corrupt, nulls2);
}

static void test_sizes() {
  size_t sizes[] = {1,    8,     16,    17,     24,       31,       48,        64,         100,
                    128,  256,   500,   1024,   2000,     3000,     4096,      5000,       8192,
                    9000, 16384, 65536, 100000, 1u << 20, 3u << 20, 16u << 20, 256u << 20, 1u << 30};
  size_t threads[] = {1, 32, 1000, 65536, 1u << 20};
  for (size_t s : sizes) {
    for (size_t n : threads) {
      if (quick && (n > 4096 || s > (1u << 20))) continue;
      if ((double)n * s > heap_bytes / 2) continue;
      run_size(s, n, 0);
    }
    char what[48];
    snprintf(what, sizeof what, "size_%zuB", s);
    verify_after(what);
  }
  size_t aligns[] = {32, 64, 256, 1024, 4096, 65536};
  for (size_t a : aligns)
    for (size_t s : {(size_t)1, (size_t)40, (size_t)3000, (size_t)70000}) run_size(s, quick ? 256 : 10000, a);
}

/* Mixed sizes, divergent lanes, cross-kernel free, new/delete. */
__global__ void k_mixed(void **ptrs, size_t *sizes, size_t n, int divergent) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint32_t h = hash32((uint32_t)i);
  ptrs[i] = 0;
  sizes[i] = 16 + h % 4081;
  if (divergent && (h >> 20) % 2) return; /* a random half of the lanes */
  ptrs[i] = malloc(sizes[i]);
}
__global__ void k_mixed_fill(void **ptrs, size_t *sizes, size_t n, int mode, unsigned long long *bad) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n || !ptrs[i]) return;
  unsigned char *p = (unsigned char *)ptrs[i];
  for (size_t j = 0; j + 1 < sizes[i]; j += 61) { /* the last byte is checked below */
    unsigned char v = (unsigned char)(i * 31 + j);
    if (mode == 0)
      p[j] = v;
    else if (p[j] != v)
      atomicAdd(bad, 1ull);
  }
  unsigned char v = (unsigned char)(i * 7);
  if (mode == 0)
    p[sizes[i] - 1] = v;
  else if (p[sizes[i] - 1] != v)
    atomicAdd(bad, 1ull);
}
struct Node {
  int v;
  Node *next;
};
__global__ void k_new_delete(unsigned long long *bad, int n) {
  Node *head = nullptr;
  for (int i = 0; i < n; i++) {
    Node *x = new Node{i, head};
    if (!x) {
      atomicAdd(bad, 1ull);
      return;
    }
    head = x;
  }
  int expect = n - 1;
  while (head) {
    if (head->v != expect--) atomicAdd(bad, 1ull);
    Node *nx = head->next;
    delete head;
    head = nx;
  }
  int *arr = new int[1000];
  if (!arr)
    atomicAdd(bad, 1ull);
  else
    delete[] arr;
}

static void test_mixed(int divergent) {
  size_t n = quick ? 4096 : (1u << 20);
  void **ptrs;
  size_t *sizes;
  CK(cudaMalloc(&ptrs, n * sizeof(void *)));
  CK(cudaMalloc(&sizes, n * sizeof(size_t)));
  counters[1] = 0;
  k_mixed<<<blocks_for(n), 256>>>(ptrs, sizes, n, divergent);
  k_mixed_fill<<<blocks_for(n), 256>>>(ptrs, sizes, n, 0, &counters[1]);
  k_mixed_fill<<<blocks_for(n), 256>>>(ptrs, sizes, n, 1, &counters[1]);
  std::vector<void *> host(n);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(host.data(), ptrs, n * sizeof(void *), cudaMemcpyDeviceToHost));
  size_t got = 0;
  for (void *p : host) got += p != nullptr;
  k_free<<<blocks_for(n), 256>>>(ptrs, n); /* freed by another kernel */
  CK(cudaDeviceSynchronize());
  size_t want = divergent ? n * 4 / 10 : n; /* about half of the lanes */
  report(counters[1] == 0 && got >= want && got <= n,
         divergent ? "warp_divergent_half_lanes" : "mixed_sizes_16_4096_cross_kernel_free",
         "%zu of %zu threads allocated, corrupt %llu", got, n, counters[1]);
  CK(cudaFree(ptrs));
  CK(cudaFree(sizes));
}

static void test_new_delete() {
  counters[1] = 0;
  k_new_delete<<<quick ? 4 : 256, 128>>>(&counters[1], 50);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  report(counters[1] == 0, "device_new_delete", "errors %llu", counters[1]);
}

/* Exhaustion: every thread allocates until NULL; then everything is freed.
 * size 0: sizes of 16 .. 4096 B that each thread draws on its own (a warp
 * asks for a few lanes of each class at a time), their bytes summed. */
__global__ void k_exhaust(void **slots, unsigned long long cap, unsigned long long *next,
                          unsigned long long *bytes, size_t size) {
  uint32_t r = hash32((uint32_t)(blockIdx.x * blockDim.x + threadIdx.x) + 17u);
  for (;;) {
    size_t s = size;
    if (!size) {
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
    if (!size) atomicAdd(bytes, (unsigned long long)s);
  }
}

/* size 0: mixed sizes (--mixed-fill, on a fresh 256 MiB heap): the small
 * classes' requests share a bin until it holds a few chunks instead of
 * taking a chunk in every arena, so at least 85% is granted there too. */
static void test_exhaustion(size_t size, size_t threads) {
  unsigned long long cap = heap_bytes / (size ? size : 16) + 1024;
  void **slots;
  CK(cudaMalloc(&slots, cap * sizeof(void *)));
  counters[0] = counters[1] = 0;
  devmalloc_stats_t before = stats();
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaEventRecord(a);
  k_exhaust<<<blocks_for(threads), 256>>>(slots, cap, &counters[0], &counters[1], size);
  cudaEventRecord(b);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize()); /* it ended: it did not hang */
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  unsigned long long got = counters[0] < cap ? counters[0] : cap;
  devmalloc_stats_t mid = stats();
  k_free<<<blocks_for(got), 256>>>(slots, got);
  CK(cudaDeviceSynchronize());
  char why[200] = "";
  bool whole = heap_whole(why, sizeof why);
  /* judged against the blocks' bytes: a request below 32 B takes a 32-byte
   * block (its sectors its own, heap.c: dm_heap_request_size) */
  size_t block = size && size < 32 ? 32 : size;
  double util = (double)(size ? got * size : counters[1]) / heap_bytes;
  double filled = (double)(size ? got * block : counters[1]) / heap_bytes;
  char name[64];
  if (size)
    snprintf(name, sizeof name, "exhaustion_%zuB", size);
  else
    snprintf(name, sizeof name, "exhaustion_mixed_16_4096_fresh_heap");
  report(whole && got < cap && mid.failures > before.failures && filled >= 0.85, name,
         "%llu blocks, utilization %.1f%% of a %zu MiB heap (blocks of %zu B: %.1f%%), ended in %.1f ms, "
         "whole after free: %s %s",
         got, 100 * util, heap_bytes >> 20, block, 100 * filled, ms, whole ? "yes" : "no", why);
  CK(cudaFree(slots));
}

/* Double free and foreign free are detected, counted, and harmless. */
__device__ int some_global;
__global__ void k_misuse(void *foreign_dev) {
  void *p = malloc(64);
  free(p);
  free(p); /* double free (slab) */
  void *q = malloc(100000);
  free(q);
  free(q); /* double free (large) */
  int local;
  free(&some_global); /* foreign */
  free(foreign_dev);  /* foreign: cudaMalloc memory */
  char *r = (char *)malloc(256);
  free(r + 16); /* inside a block: foreign */
  free(r);
  (void)local;
}
__global__ void k_warp_double_free(void) {
  __shared__ void *p;
  if (threadIdx.x == 0) p = malloc(32);
  __syncthreads();
  free(p); /* 32 lanes free the same pointer at once: one free, 31 double */
}

static void test_misuse() {
  devmalloc_stats_t a = stats();
  void *foreign;
  CK(cudaMalloc(&foreign, 4096));
  k_misuse<<<1, 1>>>(foreign);
  CK(cudaGetLastError());
  k_warp_double_free<<<1, 32>>>();
  CK(cudaGetLastError());
  devmalloc_stats_t b = stats();
  char why[200] = "";
  int whole = 0;
  devmalloc_status_t st = devmalloc_heap_verify(heap, &whole, why, sizeof why);
  run_size(64, 1000, 0); /* still usable */
  unsigned long long dbl = b.double_frees - a.double_frees, fgn = b.foreign_frees - a.foreign_frees;
  report(st == DEVMALLOC_OK && dbl == 2 + 31 && fgn == 3, "double_and_foreign_free_detected",
         "double %llu (want 33) foreign %llu (want 3) invariants %s %s", dbl, fgn,
         st == DEVMALLOC_OK ? "ok" : "BROKEN", why);
  CK(cudaFree(foreign));
}

static void test_stats_and_whole() {
  devmalloc_stats_t s = stats();
  char why[200] = "";
  int whole = 0;
  devmalloc_status_t st = devmalloc_heap_verify(heap, &whole, why, sizeof why);
  report(st == DEVMALLOC_OK && whole && s.allocs > 0 && s.allocs == s.frees && s.bytes_in_use == 0,
         "stats_balance_and_invariants",
         "allocs %llu frees %llu failures %llu in use %llu B, invariants %s %s", (unsigned long long)s.allocs,
         (unsigned long long)s.frees, (unsigned long long)s.failures, (unsigned long long)s.bytes_in_use,
         st == DEVMALLOC_OK ? "ok" : "BROKEN", why);
  devmalloc_stats_print(&s, stdout, "(dm_suite)");
}

/* Even threads ask for s0 bytes, odd ones for s1: each warp's lanes are two
 * groups of a class each. Every thread fills its block (mode 0) or checks
 * it (mode 1): word j of thread i's block holds i * 2654435761 + j. */
__global__ void k_alloc_two(void **ptrs, size_t n, size_t s0, size_t s1) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) ptrs[i] = malloc(i & 1 ? s1 : s0);
}
__global__ void k_fill_two(void **ptrs, size_t n, size_t s0, size_t s1, int mode, unsigned long long *nulls,
                           unsigned long long *bad) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint64_t *w = (uint64_t *)ptrs[i];
  if (!w) {
    if (mode == 0) atomicAdd(nulls, 1ull);
    return;
  }
  for (size_t j = 0; j < (i & 1 ? s1 : s0) / 8; j++) {
    uint64_t v = i * 2654435761ull + j;
    if (mode == 0)
      w[j] = v;
    else if (w[j] != v)
      atomicAdd(bad, 1ull);
  }
}

/* Cells of particles (16 B each, 1 .. 29 a cell) stepped 12 times: every
 * step a new buffer for the survivors, the old one freed, in one kernel on
 * a fresh heap, so that a warp's lanes ask for different sizes while the
 * bins take their first chunks. Counts NULLs and survivors that differ from
 * the same steps on the host's formula (checked on the device). */
struct cell_particle {
  int x, y, vx, vy;
};
__global__ void k_cells(int ncells, unsigned long long *nulls, unsigned long long *bad) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= ncells) return;
  int n = 1 + (c * 37) % 29;
  cell_particle *p = (cell_particle *)malloc(n * sizeof *p);
  if (!p) {
    atomicAdd(nulls, 1ull);
    return;
  }
  for (int i = 0; i < n; i++) p[i] = {c * 3 + i, c - i, i % 5 - 2, c % 7 - 3};
  for (int s = 0; s < 12; s++) {
    int alive = 0;
    for (int i = 0; i < n; i++) alive += (p[i].x + p[i].y + s) % 11 != 0;
    cell_particle *q = (cell_particle *)malloc((alive ? alive : 1) * sizeof *q);
    if (!q) {
      atomicAdd(nulls, 1ull);
      break;
    }
    int k = 0;
    for (int i = 0; i < n; i++)
      if ((p[i].x + p[i].y + s) % 11 != 0)
        q[k++] = {p[i].x + p[i].vx, p[i].y + p[i].vy, p[i].vx, p[i].vy + 1};
    free(p);
    p = q;
    n = alive;
  }
  /* the same steps again on registers only: the survivors must match */
  int m = 1 + (c * 37) % 29, seen = 0;
  for (int i = 0; i < m; i++) {
    cell_particle a = {c * 3 + i, c - i, i % 5 - 2, c % 7 - 3};
    int ok = 1;
    for (int s = 0; s < 12 && ok; s++) {
      ok = (a.x + a.y + s) % 11 != 0;
      a = {a.x + a.vx, a.y + a.vy, a.vx, a.vy + 1};
    }
    if (ok) {
      if (seen >= n || p[seen].x != a.x || p[seen].y != a.y || p[seen].vy != a.vy) atomicAdd(bad, 1ull);
      seen++;
    }
  }
  if (seen != n) atomicAdd(bad, 1ull);
  free(p);
}

/* A 64 MiB heap: first the cells on the fresh heap (a search for room whose
 * lanes read the heap's span each, while fresh chunks were taken, lost a
 * lane's slot in about one run in five: 1 .. 2 NULLs, the slot never
 * freed), then the sizes one after the other, six passes each (the bench's
 * small-heap order: each size's bins take the chunks the one before freed),
 * then five passes of warps asking for 256 B and 1 KiB at once. No NULL, no
 * overlap, the heap whole at the end. */
static void test_small_heap() {
  prefix = "small_heap_";
  counters[0] = counters[1] = 0;
  k_cells<<<blocks_for(32768, 128), 128>>>(32768, &counters[0], &counters[1]);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  report(counters[0] == 0 && counters[1] == 0, "small_heap_cells_x32768", "nulls %llu wrong cells %llu",
         counters[0], counters[1]);
  const size_t sizes[][2] = {{16, 1u << 20}, {256, 1u << 16}, {1024, 1u << 15}};
  for (auto &s : sizes)
    for (int pass = 0; pass < 3; pass++) run_size(s[0], s[1], 0);
  size_t n = 1u << 15;
  void **ptrs;
  CK(cudaMalloc(&ptrs, n * sizeof(void *)));
  unsigned long long nulls = 0, bad = 0;
  for (int pass = 0; pass < 5; pass++) {
    counters[0] = counters[1] = 0;
    k_alloc_two<<<blocks_for(n), 256>>>(ptrs, n, 256, 1024);
    k_fill_two<<<blocks_for(n), 256>>>(ptrs, n, 256, 1024, 0, &counters[0], &counters[1]);
    k_fill_two<<<blocks_for(n), 256>>>(ptrs, n, 256, 1024, 1, &counters[0], &counters[1]);
    k_free<<<blocks_for(n), 256>>>(ptrs, n);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    nulls += counters[0];
    bad += counters[1];
  }
  CK(cudaFree(ptrs));
  report(nulls == 0 && bad == 0, "small_heap_two_sizes_a_warp_x32768",
         "5 passes: nulls %llu overlapping/corrupt words %llu", nulls, bad);
  verify_after("small_heap");
  char why[200] = "";
  report(heap_whole(why, sizeof why), "small_heap_whole", "%s", why);
  prefix = "";
}

int main(int argc, char **argv) {
  quick = argc > 1 && !strcmp(argv[1], "--quick");
  bool mixed_fill = argc > 1 && !strcmp(argv[1], "--mixed-fill");
  bool small_heap = argc > 1 && !strcmp(argv[1], "--small-heap");
  heap_bytes = small_heap ? (64ull << 20) : quick || mixed_fill ? (256ull << 20) : (4ull << 30);
  cudaEvent_t a, b;
  CK(cudaFree(0));
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaEventRecord(a);
  cudaError_t e = devmalloc_cuda_init(heap_bytes);
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  report(e == cudaSuccess, "heap_init", "%zu MiB in %.2f ms", heap_bytes >> 20, ms);
  if (e != cudaSuccess) return 1;
  heap = devmalloc_cuda_heap();
  CK(cudaMallocManaged(&counters, 4 * sizeof *counters));
  if (mixed_fill) {
    test_exhaustion(0, 65536);
    return failures ? 1 : 0;
  }
  if (small_heap) {
    test_small_heap();
    return failures ? 1 : 0;
  }
  test_sizes();
  verify_after("aligned");
  test_mixed(0);
  verify_after("mixed");
  test_mixed(1);
  verify_after("divergent");
  test_new_delete();
  verify_after("new_delete");
  test_misuse();
  test_exhaustion(4096, quick ? 1024 : 1u << 20);
  test_exhaustion(1u << 20, 1024);
  test_exhaustion(16, quick ? 1024 : 1u << 16);
  test_stats_and_whole();
  return failures ? 1 : 0;
}
