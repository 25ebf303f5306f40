// The README's "call once" recipe: a program that creates its heap with
// devmalloc_cuda_init (host runtime from the install, through pkg-config).
// Built without a GPU by check_relink_products; never run there.
#include <cstdio>
#include <devmalloc_cuda.h>

__global__ void k(int **out) { *out = (int *)malloc(sizeof(int)); }

int main() {
  if (devmalloc_cuda_init(64ull << 20) != 0) {
    std::puts("no heap");
    return 1;
  }
  int **p;
  cudaMalloc(&p, sizeof *p);
  k<<<1, 1>>>(p);
  return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}
