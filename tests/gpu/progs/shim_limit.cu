// shim_limit.cu — the heap-size limit under the shim: set 64 MiB before the
// first launch and read it back; allocate; setting another value afterwards
// is refused with cudaErrorInvalidValue (as the stock heap does), the same
// value is accepted.
#include "shim_common.h"

int main() {
  size_t v = 0;
  CK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 64u << 20));
  CK(cudaDeviceGetLimit(&v, cudaLimitMallocHeapSize));
  printf("limit before launch: %zu\n", v);
  if (v != (64u << 20)) return 1;
  int rc = report("1KiB", run_on(0, 1 << 14, 1024, 3), 1 << 14);
  CK(cudaDeviceGetLimit(&v, cudaLimitMallocHeapSize));
  printf("limit after launch: %zu\n", v);
  cudaError_t e = cudaDeviceSetLimit(cudaLimitMallocHeapSize, 128u << 20);
  printf("set other after launch: %s\n", cudaGetErrorName(e));
  (void)cudaGetLastError();
  cudaError_t same = cudaDeviceSetLimit(cudaLimitMallocHeapSize, v);
  printf("set same after launch: %s\n", cudaGetErrorName(same));
  if (e != cudaErrorInvalidValue) return 1;
  return rc;
}
