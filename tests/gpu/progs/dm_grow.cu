/*
 * dm_grow.cu — a heap that grows, on the GPU. Prints PASS/FAIL lines
 * (tests/gpu/run.sh format).
 *
 * Relinked build (-rdc with libdevmalloc_device.a, heap from
 * devmalloc_cuda_init_growing(NULL): 64 MiB mapped at first, the device's
 * memory at most), or -DPLAIN: the same kernels as a plain program for the
 * shim (no devmalloc calls; the case checks the shim's stats instead).
 * The program never sets cudaLimitMallocHeapSize.
 *
 *   1. 16 GiB over 8 kernels, all live at the end (2 GiB each: 32 KiB blocks
 *      and 2 KiB slab slots alternately), every allocation non-NULL and
 *      intact; then one kernel frees all.
 *   2. (relinked) trim: mapped bytes drop to the initial size.
 *   3. one kernel that alone needs 4 GiB, from the trimmed heap: it grows
 *      while that kernel runs (growth events and mapped bytes counted across
 *      that one launch); a trim runs beside it (relinked build).
 *   4. a kernel that needs more than the device has: 1 GiB blocks until
 *      NULL; it ends, each thread saw NULL, the total stays below the
 *      device's memory; a 1 TiB request is NULL at once; all freed, trimmed.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#ifndef PLAIN
#include "devmalloc_cuda.h"
#else
#include <cuda_runtime.h>
#endif
#include "pass_fail.h"

__device__ unsigned long long d_nulls, d_bad, d_got;

__global__ void k_alloc(char **ptrs, size_t n, size_t size, unsigned tag) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  char *p = (char *)malloc(size);
  ptrs[i] = p;
  if (!p) {
    atomicAdd(&d_nulls, 1ull);
    return;
  }
  p[0] = (char)(tag + i);
  p[size - 1] = (char)(tag + i);
}

__global__ void k_check_free(char **ptrs, size_t n, size_t size, unsigned tag) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  char *p = ptrs[i];
  if (!p) return;
  if (p[0] != (char)(tag + i) || p[size - 1] != (char)(tag + i)) atomicAdd(&d_bad, 1ull);
  free(p);
}

/* Each thread takes blocks of `size` until NULL (at most `per` of them). */
#define PER 64
__global__ void k_until_null(char **ptrs, size_t size, unsigned long long *total, int *saw_null) {
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  saw_null[t] = 0;
  for (int k = 0; k < PER; k++) {
    char *p = (char *)malloc(size);
    ptrs[t * PER + k] = p;
    if (!p) {
      saw_null[t] = 1;
      break;
    }
    p[0] = 1;
    p[size - 1] = 1;
    atomicAdd(total, (unsigned long long)size);
  }
}
__global__ void k_free_all(char **ptrs, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n && ptrs[i]) free(ptrs[i]);
}
__global__ void k_huge(void **out) { *out = malloc(1ull << 40); }

static unsigned long long get(const unsigned long long &sym) {
  unsigned long long v;
  CK(cudaMemcpyFromSymbol(&v, sym, sizeof v));
  return v;
}
static void zero(const unsigned long long &sym) {
  unsigned long long z = 0;
  CK(cudaMemcpyToSymbol(sym, &z, sizeof z));
}

#ifndef PLAIN
static devmalloc_stats_t stats() {
  devmalloc_stats_t s;
  CK(cudaDeviceSynchronize());
  devmalloc_heap_stats(devmalloc_cuda_heap(), &s);
  return s;
}
#endif

int main() {
  char d[512];
  CK(cudaFree(0));
#ifndef PLAIN
  cudaError_t e = devmalloc_cuda_init_growing(NULL);
  devmalloc_heap_t *heap = devmalloc_cuda_heap();
  snprintf(d, sizeof d, "%s", cudaGetErrorString(e));
  report_line(e == cudaSuccess && heap && devmalloc_heap_grows(heap), "grow_init", d);
  if (e != cudaSuccess || !heap) return 1;
  devmalloc_stats_t s0 = stats();
  snprintf(d, sizeof d, "%llu MiB mapped at first (metadata included), max %llu MiB",
           (unsigned long long)(s0.mapped_bytes >> 20), (unsigned long long)(s0.max_bytes >> 20));
  report_line(s0.mapped_bytes < (64ull << 20) + s0.max_bytes / 100 + (64ull << 20), "grow_starts_small", d);
#endif
  size_t total_mem = 0, free_mem = 0;
  CK(cudaMemGetInfo(&free_mem, &total_mem));

  /* 1. 16 GiB over 8 kernels, all live */
  const int K = 8;
  size_t n[K], sz[K];
  char **ptrs[K];
  for (int k = 0; k < K; k++) {
    sz[k] = k % 2 ? 2048 : 32768;
    n[k] = (2ull << 30) / sz[k];
    CK(cudaMalloc(&ptrs[k], n[k] * sizeof(char *)));
  }
  zero(d_nulls);
  zero(d_bad);
  for (int k = 0; k < K; k++) {
    k_alloc<<<(unsigned)((n[k] + 255) / 256), 256>>>(ptrs[k], n[k], sz[k], 7u * k);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
  }
  unsigned long long nulls = get(d_nulls);
#ifndef PLAIN
  devmalloc_stats_t s1 = stats();
  snprintf(d, sizeof d, "%llu NULLs; mapped %llu MiB, %llu growth events, %llu waits, %llu timeouts", nulls,
           (unsigned long long)(s1.mapped_bytes >> 20), (unsigned long long)s1.growth_events,
           (unsigned long long)s1.grow_waits, (unsigned long long)s1.grow_timeouts);
  report_line(nulls == 0 && s1.mapped_bytes >= (16ull << 30) && s1.growth_events > 0, "grow_16g_over_kernels",
              d);
#else
  snprintf(d, sizeof d, "%llu NULLs", nulls);
  report_line(nulls == 0, "grow_16g_over_kernels", d);
#endif
  for (int k = 0; k < K; k++) {
    k_check_free<<<(unsigned)((n[k] + 255) / 256), 256>>>(ptrs[k], n[k], sz[k], 7u * k);
    CK(cudaGetLastError());
  }
  CK(cudaDeviceSynchronize());
  unsigned long long bad = get(d_bad);
  snprintf(d, sizeof d, "%llu damaged blocks", bad);
  report_line(bad == 0, "grow_16g_intact", d);

#ifndef PLAIN
  /* 2. trim */
  char why[200] = "";
  int whole = 0;
  devmalloc_status_t vst = devmalloc_heap_verify(heap, &whole, why, sizeof why);
  report_line(vst == DEVMALLOC_OK && whole, "grow_whole_after_free", why);
  size_t unmapped = 0;
  devmalloc_status_t tst = devmalloc_heap_trim(heap, 0, &unmapped);
  devmalloc_stats_t s2 = stats();
  snprintf(d, sizeof d, "%zu MiB unmapped, mapped %llu -> %llu MiB", unmapped >> 20,
           (unsigned long long)(s1.mapped_bytes >> 20), (unsigned long long)(s2.mapped_bytes >> 20));
  report_line(tst == DEVMALLOC_OK && s2.mapped_bytes + (15ull << 30) < s1.mapped_bytes &&
                  s2.mapped_bytes <= s0.mapped_bytes,
              "grow_trim_drops_mapped", d);
  vst = devmalloc_heap_verify(heap, &whole, why, sizeof why);
  report_line(vst == DEVMALLOC_OK && whole, "grow_whole_after_trim", why);
#endif

  /* 3. one kernel that alone needs 4 GiB */
  {
    size_t n4 = (4ull << 30) / 32768;
    char **p4;
    CK(cudaMalloc(&p4, n4 * sizeof(char *)));
    zero(d_nulls);
    zero(d_bad);
#ifndef PLAIN
    devmalloc_stats_t a = stats();
#endif
    k_alloc<<<(unsigned)((n4 + 255) / 256), 256>>>(p4, n4, 32768, 3);
    CK(cudaGetLastError());
#ifndef PLAIN
    /* a trim while that kernel runs (its own kernel, on the heap's stream) */
    size_t un_beside = 0;
    devmalloc_status_t tb = devmalloc_heap_trim(heap, 0, &un_beside);
#endif
    CK(cudaDeviceSynchronize());
    nulls = get(d_nulls);
#ifndef PLAIN
    snprintf(d, sizeof d, "%s, %zu MiB unmapped", devmalloc_status_string(tb), un_beside >> 20);
    report_line(tb == DEVMALLOC_OK, "grow_trim_beside_kernel", d);
#endif
#ifndef PLAIN
    devmalloc_stats_t b = stats();
    snprintf(d, sizeof d,
             "%llu NULLs; during the kernel: %llu growth events, mapped %llu -> %llu MiB, %llu waits", nulls,
             (unsigned long long)(b.growth_events - a.growth_events),
             (unsigned long long)(a.mapped_bytes >> 20), (unsigned long long)(b.mapped_bytes >> 20),
             (unsigned long long)(b.grow_waits - a.grow_waits));
    report_line(nulls == 0 && b.growth_events > a.growth_events &&
                    b.mapped_bytes >= a.mapped_bytes + (4ull << 30) - (64ull << 20),
                "grow_during_one_kernel_4g", d);
#else
    snprintf(d, sizeof d, "%llu NULLs", nulls);
    report_line(nulls == 0, "grow_during_one_kernel_4g", d);
#endif
    k_check_free<<<(unsigned)((n4 + 255) / 256), 256>>>(p4, n4, 32768, 3);
    CK(cudaDeviceSynchronize());
    report_line(get(d_bad) == 0, "grow_4g_intact", "");
    CK(cudaFree(p4));
  }

  /* 4. more than the device has */
  {
    const unsigned T = 256;
    char **pp;
    unsigned long long *total;
    int *saw;
    CK(cudaMalloc(&pp, (size_t)T * PER * sizeof(char *)));
    CK(cudaMallocManaged(&total, sizeof *total));
    CK(cudaMallocManaged(&saw, T * sizeof *saw));
    *total = 0;
    k_until_null<<<T / 64, 64>>>(pp, 1ull << 30, total, saw);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    int all = 1;
    for (unsigned t = 0; t < T; t++) all &= saw[t];
    snprintf(d, sizeof d, "%llu GiB granted of %zu GiB device memory; every thread got NULL: %d",
             *total >> 30, total_mem >> 30, all);
    report_line(all && *total > 0 && *total < total_mem, "grow_beyond_device_null", d);
    void **out;
    CK(cudaMallocManaged(&out, sizeof *out));
    *out = (void *)1;
    k_huge<<<1, 1>>>(out);
    CK(cudaDeviceSynchronize());
    report_line(*out == NULL, "grow_beyond_max_null", "");
    k_free_all<<<T * PER / 256, 256>>>(pp, (size_t)T * PER);
    CK(cudaDeviceSynchronize());
#ifndef PLAIN
    devmalloc_stats_t s3 = stats();
    size_t un = 0;
    devmalloc_heap_trim(heap, 0, &un);
    devmalloc_stats_t s4 = stats();
    snprintf(d, sizeof d,
             "peak %llu MiB; after frees and trim %llu MiB mapped (%zu MiB unmapped); %llu waits ended "
             "without memory",
             (unsigned long long)(s3.mapped_peak >> 20), (unsigned long long)(s4.mapped_bytes >> 20),
             un >> 20, (unsigned long long)s4.grow_timeouts);
    report_line(s4.mapped_bytes <= s0.mapped_bytes, "grow_trim_after_full", d);
    vst = devmalloc_heap_verify(heap, &whole, why, sizeof why);
    report_line(vst == DEVMALLOC_OK && whole, "grow_whole_at_end", why);
    printf("grow stats: ");
    devmalloc_stats_print(&s4, stdout, "dm_grow");
#endif
  }
  return failures ? 1 : 0;
}
