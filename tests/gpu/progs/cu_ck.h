/* cu_ck.h — CU(x): end the program (exit 1) on a CUDA Driver API error, with
 * the call and the error's name on stderr (C and C++; cuda_ck.h is the
 * runtime API's). For the driver-API test and corpus programs. */
#pragma once
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

#define CU(x)                                                         \
  do {                                                                \
    CUresult r_ = (x);                                                \
    if (r_ != CUDA_SUCCESS) {                                         \
      const char *s_ = "?";                                           \
      cuGetErrorName(r_, &s_);                                        \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, s_); \
      exit(1);                                                        \
    }                                                                 \
  } while (0)
