// recurse.cu — kernels whose stack size is not known at compile time:
//  1. a deep chain of non-inlined calls, entered through a function pointer,
//     with malloc at the bottom (default stack limit);
//  2. per-thread binary search trees built by a recursive insert that
//     allocates each node at the bottom of the recursion, walked and freed
//     recursively (the program raises the stack limit, as such code does).
// The tree code is __host__ __device__: the host runs it too, as reference.
#include <vector>
#include "corpus.h"

struct TreeNode {
  int key;
  TreeNode *left, *right;
};

__host__ __device__ TreeNode *tree_insert(TreeNode *t, int key, int *fail) {
  if (!t) {
    TreeNode *n = (TreeNode *)malloc(sizeof(TreeNode));
    if (!n) {
      *fail = 1;
      return nullptr;
    }
    n->key = key;
    n->left = n->right = nullptr;
    return n;
  }
  if (key < t->key)
    t->left = tree_insert(t->left, key, fail);
  else if (key > t->key)
    t->right = tree_insert(t->right, key, fail);
  return t;
}
__host__ __device__ int tree_height(const TreeNode *t) {
  if (!t) return 0;
  int a = tree_height(t->left), b = tree_height(t->right);
  return 1 + (a > b ? a : b);
}
// In-order walk: sum of key * rank, so the order matters.
__host__ __device__ void tree_walk(const TreeNode *t, unsigned long long *acc, int *rank) {
  if (!t) return;
  tree_walk(t->left, acc, rank);
  *acc += (unsigned long long)t->key * (unsigned long long)(++*rank);
  tree_walk(t->right, acc, rank);
}
__host__ __device__ void tree_free(TreeNode *t) {
  if (!t) return;
  tree_free(t->left);
  tree_free(t->right);
  free(t);
}

typedef unsigned (*keygen_t)(unsigned, unsigned);
__host__ __device__ unsigned gen_mul(unsigned s, unsigned i) {
  return (s * 2654435761u + i * 40503u) % 100003u;
}
__host__ __device__ unsigned gen_xs(unsigned s, unsigned i) {
  unsigned x = s ^ (i * 0x9e3779b9u);
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return x % 65521u;
}
__host__ __device__ unsigned gen_lin(unsigned s, unsigned i) { return (s + i * 7919u) % 50021u; }
__host__ __device__ unsigned gen_sq(unsigned s, unsigned i) { return (s + i * i * 31u) % 40009u; }
__device__ keygen_t d_gens[4] = {gen_mul, gen_xs, gen_lin, gen_sq};
static keygen_t h_gens[4] = {gen_mul, gen_xs, gen_lin, gen_sq};

__host__ __device__ unsigned long long one_tree(keygen_t g, unsigned tid, int *height, int *fail) {
  TreeNode *root = nullptr;
  int n = 16 + tid % 49;
  for (int i = 0; i < n; i++) root = tree_insert(root, (int)g(tid, i), fail);
  unsigned long long acc = 0;
  int rank = 0;
  tree_walk(root, &acc, &rank);
  *height = tree_height(root);
  tree_free(root);
  return acc * 31 + rank;
}

__global__ void trees(int n, unsigned long long *out, int *heights, int *fail) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid >= n) return;
  out[tid] = one_tree(d_gens[tid % 4], tid, &heights[tid], fail);
}

// The call chain: eight levels, each with its own frame, malloc at the bottom.
#define LEVEL(k, next)                                     \
  __device__ __noinline__ int *level##k(int n, int seed) { \
    volatile int pad[4];                                   \
    for (int i = 0; i < 4; i++) pad[i] = seed + i * k;     \
    int *p = next(n + 1, seed ^ (k * 977));                \
    if (p) p[k % n] += pad[seed & 3];                      \
    return p;                                              \
  }
__device__ __noinline__ int *level_bottom(int n, int seed) {
  int *p = (int *)malloc(n * sizeof(int));
  if (p)
    for (int i = 0; i < n; i++) p[i] = seed + i;
  return p;
}
// clang-format off
LEVEL(8, level_bottom) LEVEL(7, level8) LEVEL(6, level7) LEVEL(5, level6)
LEVEL(4, level5) LEVEL(3, level4) LEVEL(2, level3) LEVEL(1, level2)
    // clang-format on
    typedef int *(*chain_t)(int, int);
__device__ chain_t d_chains[3] = {level1, level3, level5};

__global__ void chains(int n, long long *out, int *fail) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid >= n) return;
  chain_t f = d_chains[tid % 3];
  int len = 4 + tid % 13;
  int *p = f(len, tid);
  if (!p) {
    atomicAdd(fail, 1);
    return;
  }
  long long s = 0;
  int total = len + 8 - 2 * (tid % 3);  // the chain adds one per level
  for (int i = 0; i < total; i++) s += (long long)p[i] * (i + 1);
  free(p);
  out[tid] = s;
}

int main() {
  bool small = corpus_small();
  int nt = small ? 4096 : 65536, nc = small ? 8192 : 262144;
  corpus_heap_init(512u << 20);
  CK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 512u << 20));
  long long *cout;
  unsigned long long *tout;
  int *heights, *fail;
  CK(cudaMallocManaged(&cout, nc * sizeof(long long)));
  CK(cudaMallocManaged(&tout, nt * sizeof(unsigned long long)));
  CK(cudaMallocManaged(&heights, nt * sizeof(int)));
  CK(cudaMallocManaged(&fail, 2 * sizeof(int)));
  fail[0] = fail[1] = 0;

  chains<<<(nc + 127) / 128, 128>>>(nc, cout, &fail[0]);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  CK(cudaDeviceSetLimit(cudaLimitStackSize, 8192));
  trees<<<(nt + 127) / 128, 128>>>(nt, tout, heights, &fail[1]);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  if (fail[0] || fail[1]) {
    fprintf(stderr, "recurse: malloc returned NULL (%d, %d)\n", fail[0], fail[1]);
    return 1;
  }

  int rc = 0, maxh = 0;
  for (int t = 0; t < nt; t++) {
    if (heights[t] > maxh) maxh = heights[t];
    if (t % 37 && t != nt - 1) continue;
    int h = 0, f = 0;
    unsigned long long want = one_tree(h_gens[t % 4], t, &h, &f);
    if (want != tout[t] || h != heights[t]) {
      if (rc++ < 5)
        fprintf(stderr, "recurse: tree %d: %llu/%d, want %llu/%d\n", t, tout[t], heights[t], want, h);
    }
  }
  for (int t = 0; t < nc; t++) {
    int len = 4 + t % 13, depth = 8 - 2 * (t % 3), total = len + depth;
    std::vector<long long> p(total);
    // level k (from the bottom up) adds pad[seed_k & 3] to p[k % n_k]
    for (int i = 0; i < total; i++) p[i] = 0;
    int first = 1 + 2 * (t % 3);
    int seed = t, n = len;
    std::vector<int> seeds, ns;
    for (int k = first; k <= 8; k++) {
      seeds.push_back(seed);
      ns.push_back(n);
      seed ^= k * 977;
      n++;
    }
    for (int i = 0; i < total; i++) p[i] = seed + i;
    for (int k = 8; k >= first; k--) {
      int sk = seeds[k - first], nk = ns[k - first];
      p[k % nk] += sk + (sk & 3) * k;
    }
    long long s = 0;
    for (int i = 0; i < total; i++) s += p[i] * (i + 1);
    if (s != cout[t] && rc++ < 5) fprintf(stderr, "recurse: chain %d: %lld, want %lld\n", t, cout[t], s);
  }
  Digest d;
  d.bytes(cout, nc * sizeof(long long));
  d.bytes(tout, nt * sizeof(unsigned long long));
  d.bytes(heights, nt * sizeof(int));
  fprintf(stderr, "recurse: %d chains, %d trees (max height %d), %d mismatches\n", nc, nt, maxh, rc);
  corpus_result("recurse", d);
  return rc ? 1 : 0;
}
