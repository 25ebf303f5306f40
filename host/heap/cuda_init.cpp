/*
 * cuda_init.cpp — devmalloc_cuda_init() (include/devmalloc_cuda.h): heap
 * set-up for CUDA runtime programs relinked with devmalloc that do not run
 * under the shim. Host code only, a separate member of the device library:
 * pulled in only when called, and then it needs -ldevmalloc -lcuda.
 * Locking: one mutex around the per-device heap table.
 */
#include <pthread.h>
#include "devmalloc_cuda.h"

extern "C" cudaError_t devmalloc__write_desc(unsigned long long heap_device_ptr); /* devmalloc.cu */

#define MAX_DEVICES 64
static devmalloc_heap_t *heaps[MAX_DEVICES];
static pthread_mutex_t heaps_lock = PTHREAD_MUTEX_INITIALIZER;

extern "C" devmalloc_heap_t *devmalloc_cuda_heap(void) {
  int dev;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= MAX_DEVICES) return NULL;
  return heaps[dev];
}

/* One heap for the current device, made by `make` unless it exists. */
static cudaError_t init_with(devmalloc_status_t (*make)(const void *, devmalloc_heap_t **), const void *arg) {
  int dev;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return e;
  if (dev < 0 || dev >= MAX_DEVICES) return cudaErrorInvalidDevice;
  if ((e = cudaFree(0)) != cudaSuccess) return e; /* make the primary context current */
  pthread_mutex_lock(&heaps_lock);
  if (!heaps[dev]) {
    devmalloc_heap_t *h = NULL;
    devmalloc_status_t st = make(arg, &h);
    if (st == DEVMALLOC_OK) {
      e = devmalloc__write_desc(devmalloc_heap_device_ptr(h));
      if (e == cudaSuccess)
        heaps[dev] = h;
      else
        devmalloc_heap_destroy(h);
    } else {
      e = st == DEVMALLOC_ENOMEM ? cudaErrorMemoryAllocation : cudaErrorInvalidValue;
    }
  }
  pthread_mutex_unlock(&heaps_lock);
  return e;
}

static devmalloc_status_t make_growing(const void *cfg, devmalloc_heap_t **h) {
  return devmalloc_heap_create_growing(NULL, (const devmalloc_grow_config_t *)cfg, h, NULL);
}

extern "C" cudaError_t devmalloc_cuda_init_growing(const devmalloc_grow_config_t *cfg) {
  return init_with(make_growing, cfg);
}

static devmalloc_status_t make_fixed(const void *bytes, devmalloc_heap_t **h) {
  return devmalloc_heap_create(NULL, *(const size_t *)bytes, h);
}

extern "C" cudaError_t devmalloc_cuda_init(size_t heap_bytes) { return init_with(make_fixed, &heap_bytes); }
