/* shim_driver.c — the Driver API route (linked with -lcuda): own context,
 * cuModuleLoadData of a cubin read from argv[1], cuLaunchKernel, then the
 * context is destroyed and created again and the whole thing repeated (a
 * new heap for the new context). Exit 0 / 2 (NULL allocations) / 1. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include "cu_ck.h"

static void *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *b = malloc((size_t)n);
  if (fread(b, 1, (size_t)n, f) != (size_t)n) exit(1);
  fclose(f);
  return b;
}

static int round_(CUdevice dev, const void *image, int round) {
  CUcontext ctx;
  CUmodule mod;
  CUfunction fn;
  CUdeviceptr d;
  unsigned long long c[3] = {0, 0, 0};
  unsigned n = 1u << 16, size = 1024, salt = 5 + round;
  CU(cuCtxCreate(&ctx, NULL, 0, dev));
  CU(cuModuleLoadData(&mod, image));
  CU(cuModuleGetFunction(&fn, mod, "alloc_check"));
  CU(cuMemAlloc(&d, sizeof c));
  CU(cuMemsetD8(d, 0, sizeof c));
  void *args[] = {&n, &size, &salt, &d};
  CU(cuLaunchKernel(fn, (n + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
  CU(cuMemcpyDtoH(c, d, sizeof c));
  CU(cuMemFree(d));
  CU(cuModuleUnload(mod));
  CU(cuCtxDestroy(ctx));
  printf("round%d: ok=%llu null=%llu bad=%llu expect=%u\n", round, c[0], c[1], c[2], n);
  if (c[2] || c[0] + c[1] != n) return 1;
  return c[1] ? 2 : 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s kernels.cubin\n", argv[0]);
    return 1;
  }
  CUdevice dev;
  CU(cuInit(0));
  CU(cuDeviceGet(&dev, 0));
  void *image = slurp(argv[1]);
  int a = round_(dev, image, 0), b = round_(dev, image, 1);
  return a == 1 || b == 1 ? 1 : (a ? a : b);
}
