// pass_fail.h — shared by the devmalloc API test programs (dm_suite.cu,
// dm_grow.cu), which print PASS/FAIL lines (tests/gpu/run.sh format): the
// failure count and CK, which ends the program on a CUDA error with one FAIL
// line. Each program keeps its own report() (dm_suite adds timings).
#pragma once
#include <cstdio>
#include <cstdlib>

static int failures = 0;
#define CK(x)                                                                          \
  do {                                                                                 \
    cudaError_t e_ = (x);                                                              \
    if (e_ != cudaSuccess) {                                                           \
      printf("FAIL cuda: %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)
