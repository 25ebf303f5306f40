// cuda_ck.h — CK(x): end the program (exit 1) on a CUDA runtime error, with
// the call and the error on stderr. For the test programs that print no
// PASS/FAIL lines themselves (pass_fail.h has the PASS/FAIL one).
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CK(x)                                                                             \
  do {                                                                                    \
    cudaError_t e_ = (x);                                                                 \
    if (e_ != cudaSuccess) {                                                              \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)
