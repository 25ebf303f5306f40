// check_overflow.cu — a program with an off-by-one write past a device
// malloc block (argument "bad"), or without it ("clean"). Plain nvcc, PTX
// embedded: under the shim it runs on devmalloc; with DEVMALLOC_CHECK=1 the
// damaged block is reported.
#include <cstdio>
#include <cstring>

__global__ void names(int n, int bad, unsigned long long *sum) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  char *s = (char *)malloc(24);
  if (!s) return;
  int len = bad && t == 77 ? 25 : 24;  // thread 77 writes one byte too many
  for (int i = 0; i < len; i++) s[i] = (char)('a' + (t + i) % 26);
  unsigned long long h = 0;
  for (int i = 0; i < 24; i++) h = h * 31 + s[i];
  atomicAdd(sum, h);
  free(s);
}

int main(int argc, char **argv) {
  int bad = argc > 1 && !strcmp(argv[1], "bad");
  unsigned long long *sum;
  cudaMallocManaged(&sum, sizeof *sum);
  *sum = 0;
  names<<<64, 256>>>(16384, bad, sum);
  cudaError_t e = cudaDeviceSynchronize();
  cudaStreamSynchronize(0);
  printf("check_overflow %s: %s sum %llu\n", bad ? "bad" : "clean", cudaGetErrorString(e), *sum);
  return e != cudaSuccess;
}
