/*
 * fake_ctx.h — the context and stream entry points of the host tests' fake
 * drivers (test_growth_fake.c, test_heap_sizes.c): one context (0x10) on
 * device 0, one stream (0x20). The includer defines FAULT(), its injected
 * failure, which pushing a context, creating a stream and synchronizing one
 * can return.
 * Locking: none (the fakes are called from the test's thread).
 */
#ifndef DM_FAKE_CTX_H
#define DM_FAKE_CTX_H
#include <cuda.h>

CUresult cuCtxGetCurrent(CUcontext *c) {
  *c = (CUcontext)0x10;
  return CUDA_SUCCESS;
}
CUresult cuCtxPushCurrent(CUcontext c) {
  FAULT();
  return CUDA_SUCCESS;
}
CUresult cuCtxPopCurrent(CUcontext *c) {
  *c = (CUcontext)0x10;
  return CUDA_SUCCESS;
}
CUresult cuCtxGetDevice(CUdevice *d) {
  *d = 0;
  return CUDA_SUCCESS;
}
CUresult cuStreamCreate(CUstream *s, unsigned f) {
  FAULT();
  *s = (CUstream)0x20;
  return CUDA_SUCCESS;
}
CUresult cuStreamDestroy(CUstream s) { return CUDA_SUCCESS; }
CUresult cuStreamSynchronize(CUstream s) {
  FAULT();
  return CUDA_SUCCESS;
}

#endif
