// shim_multigpu.cu — one heap per GPU: the same kernel on every device
// (exit 77 when the machine has one GPU).
#include "shim_common.h"

int main() {
  int n = 0;
  CK(cudaGetDeviceCount(&n));
  if (n < 2) {
    printf("only %d GPU\n", n);
    return 77;
  }
  int rc = 0;
  for (int round = 0; round < 2; round++)
    for (int d = 0; d < n; d++) {
      CK(cudaSetDevice(d));
      char what[32];
      snprintf(what, sizeof what, "device%d", d);
      int r = report(what, run_on(0, 1 << 15, 1024, 100 + d), 1 << 15);
      if (r > rc) rc = r == 1 ? 1 : (rc == 1 ? 1 : r);
    }
  return rc;
}
