// skiplist.h — a lock-free insert-only skiplist on the GPU (three -rdc
// translation units: skiplist_main.cu, skiplist_ops.cu, skiplist_verify.cu).
#pragma once
#include <cstdint>

#define SL_MAXH 32

struct SlNode {  // 16 bytes; the level array is a separate block
  int key;
  int height;
  SlNode **next;
};

__host__ __device__ inline uint32_t sl_mix(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}
// Height from the key: geometric with p = 1/2, 1..SL_MAXH.
__host__ __device__ inline int sl_height(int key) {
  uint32_t x = sl_mix((uint32_t)key * 2654435761U + 12345U);
  int h = 1;
  while (h < SL_MAXH && (x & 1)) {
    h++;
    x >>= 1;
  }
  return h;
}
// The i-th key inserted (duplicates on purpose).
__host__ __device__ inline int sl_key(int i, int range) {
  return 1 + (int)(sl_mix((uint32_t)i) % (uint32_t)range);
}

struct SlStats {
  unsigned long long retries, dups, nulls;
};

__global__ void sl_create(SlNode **head);
__global__ void sl_insert_all(SlNode **head, int nkeys, int range, SlNode **nodes, int *nnodes, SlStats *st);
__global__ void sl_walk_levels(SlNode **head, const unsigned char *expected, int *count,
                               unsigned long long *hash, int *bad);
__global__ void sl_free_nodes(SlNode **nodes, int n);
__global__ void sl_destroy(SlNode **head);
