/*
 * cubin_elf.h — what a device ELF image (cubin) says about device malloc,
 * read with libelf from its symbol table.
 *
 * The stock allocator is reached through UND GLOBAL FUNC symbols `malloc`,
 * `free` and the aligned entry point (`__cuda_syscall_aligned_malloc` in
 * CUDA 13, `__nv_aligned_device_malloc_impl` earlier) that the driver binds
 * at load. A module already linked with devmalloc defines the
 * `devmalloc_heap_desc` global; it defines `malloc` too unless the link
 * inlined it (-dlto: no `malloc` symbol is left at all). Dynamic parallelism
 * reaches the device runtime (libcudadevrt) through UND symbols named
 * `__cudaCDP*` (CUDA 12+) or `cuda*` (`cudaGetParameterBuffer`,
 * `cudaLaunchDevice`, ... before): dm_is_devrt_symbol() says which names
 * those are. Kernels are the defined global functions marked STO_CUDA_ENTRY
 * (0x10 in st_other).
 *
 * Errors: relink_err.h. Locking: none; libelf is initialised once
 * (pthread_once) and every call uses its own Elf handle over a private copy.
 */
#ifndef DM_CUBIN_ELF_H
#define DM_CUBIN_ELF_H
#include <stddef.h>

#define DM_EM_CUDA 190
#define DM_HEAP_DESC_SYMBOL "devmalloc_heap_desc"

typedef struct {
  unsigned machine;                            /* e_machine (190 for a cubin) */
  unsigned sm;                                 /* arch from e_flags, e.g. 90; 0 if unknown */
  int relocatable;                             /* ET_REL (an -rdc object's image) */
  int calls_malloc, calls_free, calls_aligned; /* UND references */
  int defines_malloc, defines_free, defines_aligned;
  int has_heap_desc;              /* devmalloc_heap_desc defined */
  int calls_devrt, defines_devrt; /* device-runtime entry points */
  unsigned nsyms;
} dm_cubin_info_t;

/* Inspect len bytes at img (an ELF; copied before libelf sees it). */
int dm_cubin_inspect(const void *img, size_t len, dm_cubin_info_t *info, char *why, size_t whylen);

/* A device-runtime entry point's name (libcudadevrt's). */
static inline int dm_is_devrt_symbol(const char *n) {
  return (n[0] == '_' && n[1] == '_' && n[2] == 'c' && n[3] == 'u' && n[4] == 'd' && n[5] == 'a' &&
          n[6] == 'C' && n[7] == 'D' && n[8] == 'P') ||
         (n[0] == 'c' && n[1] == 'u' && n[2] == 'd' && n[3] == 'a' && n[4] >= 'A' && n[4] <= 'Z');
}

/* Call fn(name, arg) for every kernel (entry function) the image defines;
 * fn returns nonzero to stop. Returns 0, or a negative error. */
int dm_cubin_kernels(const void *img, size_t len, int (*fn)(const char *name, void *arg), void *arg,
                     char *why, size_t whylen);

/* The image calls the stock device allocator. */
static inline int dm_cubin_uses_stock_malloc(const dm_cubin_info_t *i) {
  return i->calls_malloc || i->calls_free || i->calls_aligned;
}

/* devmalloc is linked in already: the heap descriptor is defined (with
 * malloc defined beside it, or inlined by an LTO link). */
static inline int dm_cubin_has_devmalloc(const dm_cubin_info_t *i) { return i->has_heap_desc; }

/* Size of an ELF image whose length is not given (cuModuleLoadData): the end
 * of its farthest header table or section. Reads at most maxlen bytes. */
int dm_elf_image_size(const void *img, size_t maxlen, size_t *size, char *why, size_t whylen);

#endif
