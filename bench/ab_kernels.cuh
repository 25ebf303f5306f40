/*
 * ab_kernels.cuh — the A/B benchmark's device kernels: one size's alloc, free
 * and pair, the bump-allocator ceiling, mixed and divergent sizes, churn, a
 * graph build and the utilization fill. Part of ab_bench.cu's translation
 * unit (included there, after its options), so that both variants build from
 * one source; no locking of its own.
 */
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
