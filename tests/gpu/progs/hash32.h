/*
 * hash32.h — a 32-bit integer hash (pseudo-random keys, sizes and seeds) for
 * the GPU test programs and the corpus programs, host or device. No state.
 */
#ifndef DM_TEST_HASH32_H
#define DM_TEST_HASH32_H

#include <cstdint>

__host__ __device__ static inline uint32_t hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

#endif
