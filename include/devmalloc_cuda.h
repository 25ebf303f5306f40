/*
 * devmalloc_cuda.h — one-call set-up for CUDA runtime programs relinked with
 * devmalloc that do not run under the LD_PRELOAD shim.
 *
 *   #include <devmalloc_cuda.h>
 *   devmalloc_cuda_init(1ull << 30);   // 1 GiB heap for the current device
 *   devmalloc_cuda_init_growing(NULL); // or: a heap that grows as needed
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
/* The same with a heap that grows (cfg NULL: defaults: 64 MiB mapped at
 * first, up to the device's memory; see devmalloc_grow_config_t). Where the
 * device has no virtual memory management, a fixed heap of cfg->fallback
 * (else cfg->initial, else 64 MiB) bytes. Call devmalloc_heap_trim
 * (devmalloc_cuda_heap(), ...) to give free memory back (kernels may run). */
cudaError_t devmalloc_cuda_init_growing(const devmalloc_grow_config_t *cfg);
/* The heap created for the current device by devmalloc_cuda_init, or NULL. */
devmalloc_heap_t *devmalloc_cuda_heap(void);
#ifdef __cplusplus
}
#endif
#endif
