/*
 * dm_reuse.cu — a block freed right after its owner's last stores, and at
 * once handed to a thread of another SM, must hold only its new owner's data.
 * Prints PASS/FAIL lines (tests/gpu/run.sh format).
 *
 * The shape is the ordinary one of device code: allocate, fill, use, write
 * once more (a destructor resetting its fields, a buffer's last update) and
 * free at once. A free that does not order the owner's stores before it
 * publishes the slot lets the next owner's data be overwritten by stores
 * still in flight from the old one. A small heap (few arenas, so the threads
 * of many SMs share each bin) makes a freed slot go to another SM soon.
 *
 * Relinked build (-rdc with libdevmalloc_device.a, a 64 MiB heap from
 * devmalloc_cuda_init), or -DPLAIN: the same kernels as a plain program,
 * for the shim (DEVMALLOC_HEAP_SIZE) and for stock.
 *   dm_reuse [rounds]
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

/* Each thread, `rounds` times: allocate `size` bytes, fill every word with
 * its own value, wait about `spin` cycles (time for stale stores to land),
 * check every word, overwrite every word and free at once. */
__global__ void k_reuse(unsigned size, unsigned rounds, unsigned spin) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x, words = size / 4u;
  for (unsigned r = 0; r < rounds; r++) {
    unsigned *p = (unsigned *)malloc(size);
    if (!p) {
      atomicAdd(&d_nulls, 1ull);
      continue;
    }
    unsigned v = (i * 2654435761u) ^ (r * 0x9E3779B9u);
    for (unsigned w = 0; w < words; w++) p[w] = v + w;
    long long t0 = clock64();
    while (clock64() - t0 < spin) {}
    unsigned bad = 0;
    for (unsigned w = 0; w < words; w++) bad |= ((volatile unsigned *)p)[w] != v + w;
    if (bad) atomicAdd(&d_bad, 1ull);
    atomicAdd(&d_got, 1ull);
    for (unsigned w = 0; w < words; w++) p[w] = ~(v + w); /* the last stores */
    free(p);
  }
}

/* The same with objects: device new of a class whose destructor writes its
 * fields, then delete (what a program tearing down its objects does). */
struct Cell {
  unsigned v[14];
  __device__ virtual ~Cell() {
    for (int k = 0; k < 14; k++) v[k] = 0xdeadbeefu;
  }
};
__global__ void k_reuse_objects(unsigned rounds, unsigned spin) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  for (unsigned r = 0; r < rounds; r++) {
    Cell *c = new Cell;
    if (!c) {
      atomicAdd(&d_nulls, 1ull);
      continue;
    }
    unsigned v = (i * 2654435761u) ^ (r * 0x9E3779B9u);
    for (int k = 0; k < 14; k++) c->v[k] = v + k;
    long long t0 = clock64();
    while (clock64() - t0 < spin) {}
    unsigned bad = 0;
    for (int k = 0; k < 14; k++) bad |= ((volatile unsigned *)c->v)[k] != v + k;
    if (bad) atomicAdd(&d_bad, 1ull);
    atomicAdd(&d_got, 1ull);
    delete c;
  }
}

static void run_case(const char *name, unsigned size, unsigned threads, unsigned rounds) {
  unsigned long long zero = 0, nulls, bad, got;
  CK(cudaMemcpyToSymbol(d_nulls, &zero, sizeof zero));
  CK(cudaMemcpyToSymbol(d_bad, &zero, sizeof zero));
  CK(cudaMemcpyToSymbol(d_got, &zero, sizeof zero));
  if (size)
    k_reuse<<<threads / 256, 256>>>(size, rounds, 2000);
  else
    k_reuse_objects<<<threads / 256, 256>>>(rounds, 2000);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpyFromSymbol(&nulls, d_nulls, sizeof nulls));
  CK(cudaMemcpyFromSymbol(&bad, d_bad, sizeof bad));
  CK(cudaMemcpyFromSymbol(&got, d_got, sizeof got));
  char detail[200];
  snprintf(detail, sizeof detail, "%llu blocks, %llu overwritten by an earlier owner, %llu NULL", got, bad,
           nulls);
  /* NULLs are allowed (the heap may run short while a round's blocks are
   * live) but most requests must be served, or nothing was tested */
  report_line(bad == 0 && got >= (unsigned long long)threads * rounds / 2, name, detail);
}

int main(int argc, char **argv) {
  unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 8;
  CK(cudaFree(0));
#ifndef PLAIN
  if (devmalloc_cuda_init(64ull << 20) != cudaSuccess) {
    report_line(false, "reuse_heap_init", "devmalloc_cuda_init(64 MiB) failed");
    return 1;
  }
#else
  CK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 64ull << 20));
#endif
  run_case("reuse_16B", 16, 1u << 18, rounds);
  run_case("reuse_64B", 64, 1u << 18, rounds);
  run_case("reuse_256B", 256, 1u << 16, rounds);
  run_case("reuse_1KiB", 1024, 1u << 15, rounds);
  run_case("reuse_4KiB", 4096, 1u << 13, rounds);
  run_case("reuse_64KiB", 65536, 1u << 9, rounds);
  run_case("reuse_objects", 0, 1u << 18, rounds);
  return failures ? 1 : 0;
}
