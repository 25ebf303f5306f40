/*
 * arch_guard.cu — what the rdc device library holds for GPU architectures older
 * than devmalloc supports (below sm_80: the allocator uses __reduce_*_sync),
 * built only for those (mk/device.mk GUARD_ARCHS).
 *
 * Without it, an -rdc link for such an architecture finds no
 * devmalloc code for it, links cleanly, and the kernels silently keep CUDA's
 * stock allocator. With it, the link pulls these definitions, which call a
 * symbol defined nowhere, so nvlink stops with
 *   Undefined reference to 'devmalloc_needs_sm_80_or_newer__remove_older_archs_from_this_link'
 * Wrapped in __CUDA_ARCH__ (no host malloc/free stubs: nvcc's would exit and replace libc's).
 * Locking: none.
 */
#include <cstddef>
#if defined(__CUDA_ARCH__)
extern "C" __device__ void devmalloc_needs_sm_80_or_newer__remove_older_archs_from_this_link(void);
#define DM_GUARD() devmalloc_needs_sm_80_or_newer__remove_older_archs_from_this_link()
extern "C" __device__ void *malloc(size_t size) throw() {
  DM_GUARD();
  return NULL;
}
extern "C" __device__ void free(void *p) throw() { DM_GUARD(); }
extern "C" __device__ void *__nv_aligned_device_malloc_impl(size_t size, size_t align) {
  DM_GUARD();
  return NULL;
}
extern "C" __device__ void *__cuda_syscall_aligned_malloc(size_t size, size_t align) {
  DM_GUARD();
  return NULL;
}
#endif
