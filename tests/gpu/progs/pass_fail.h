// pass_fail.h — shared by the devmalloc API test programs (dm_suite.cu,
// dm_grow.cu, dm_reuse.cu), which print PASS/FAIL lines (tests/gpu/run.sh
// format): the failure count, report_line() (dm_suite has its own report(),
// which adds timings) and CK, which ends the program on a CUDA error with one
// FAIL line.
#pragma once
#include <cstdio>
#include <cstdlib>

static int failures = 0;

/* One PASS or FAIL line, `detail` after a colon when not empty. */
static inline void report_line(bool ok, const char *name, const char *detail) {
  printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", name, detail[0] ? ": " : "", detail);
  if (!ok) failures++;
  fflush(stdout);
}
#define CK(x)                                                                         \
  do {                                                                                \
    cudaError_t e_ = (x);                                                             \
    if (e_ != cudaSuccess) {                                                          \
      printf("FAIL cuda: %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)
