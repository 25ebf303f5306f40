/*
 * devmalloc_cuda.h — one-call set-up for CUDA runtime programs relinked with
 * devmalloc that do not run under the LD_PRELOAD shim.
 *
 *   #include <devmalloc_cuda.h>
 *   devmalloc_cuda_init(1ull << 30);   // 1 GiB heap for the current device
 *
 * Creates a heap in the current device's primary context (initializing it if
 * needed) and binds it to the program's device image. Calling it again for the
 * same device does nothing and returns cudaSuccess. Defined in the device
 * library (libdevmalloc_device.a); programs that call it link with
 * -ldevmalloc -lcuda as well.
 */
#ifndef DEVMALLOC_CUDA_H
#define DEVMALLOC_CUDA_H
#include <cuda_runtime_api.h>
#include "devmalloc.h"
#ifdef __cplusplus
extern "C" {
#endif
cudaError_t devmalloc_cuda_init(size_t heap_bytes);
/* The heap created for the current device by devmalloc_cuda_init, or NULL. */
devmalloc_heap_t *devmalloc_cuda_heap(void);
#ifdef __cplusplus
}
#endif
#endif
