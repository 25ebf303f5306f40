// cmake_rdc.h — the two libraries' host APIs (tests/gpu/corpus/cmake_rdc).
#pragma once
#include <cstdint>
#define CR_API extern "C" __attribute__((visibility("default")))
// Builds a random graph of n vertices with per-vertex adjacency arrays from
// device malloc, sums the weights of each vertex's edges; out[0] sum of
// weights, out[1] edges, out[2] failed allocations. 0 on success.
CR_API int cr_graph_run(int n, uint32_t seed, unsigned long long out[3]);
// Builds one word per thread in a growing device-malloc'd buffer; out[0] sum
// of the words' hashes, out[1] total length, out[2] failed allocations.
CR_API int cr_text_run(int n, unsigned long long out[3]);
// The random numbers of both sides (xorshift32).
#ifdef __CUDACC__
__host__ __device__
#endif
    static inline uint32_t
    cr_rand(uint32_t x) {
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return x;
}
