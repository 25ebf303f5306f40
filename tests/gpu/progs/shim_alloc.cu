// shim_alloc.cu — the static-cudart (default) and shared-cudart (-cudart
// shared) route: plain runtime API launches, 64K threads x 1 KiB (64 MiB in
// flight, more than the stock 8 MiB heap holds: only a bound devmalloc heap
// serves them all), then 64K x 64 B.
#include "shim_common.h"

int main() {
  int rc = report("1KiB", run_on(0, 1 << 16, 1024, 1), 1 << 16);
  int rc2 = report("64B", run_on(0, 1 << 16, 64, 2), 1 << 16);
  if (rc == 1 || rc2 == 1) return 1;
  return rc ? rc : rc2;
}
