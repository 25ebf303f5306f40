/*
 * devmalloc.h — public C API of devmalloc's host runtime (libdevmalloc).
 *
 * A heap is device memory owned by one CUDA context. Any number of modules
 * (CUmodule or CUlibrary) whose device code was linked with devmalloc can be
 * bound to it: binding writes the heap's address into the module's descriptor
 * global `devmalloc_heap_desc`, after which that module's device malloc/free,
 * new/delete and __nv_aligned_device_malloc are served by the heap.
 *
 * Error convention: every function returns a devmalloc_status_t; 0 is success.
 * Thread safety: functions may be called from any thread; a heap must not be
 * destroyed while another thread uses it or while kernels bound to it run.
 */
#ifndef DEVMALLOC_H
#define DEVMALLOC_H

#include <stddef.h>
#include <stdint.h>
#include <cuda.h>

#ifdef __cplusplus
extern "C" {
#endif

/* While the version is 0.x, the minor version is the ABI (structures such as
 * devmalloc_stats_t grow between them): the shared library is named
 * libdevmalloc.so.0.<minor>, and CMake's find_package(devmalloc 0.<minor>)
 * accepts only that minor version. */
#define DEVMALLOC_VERSION_STRING "0.3.0"
#define DEVMALLOC_VERSION 300

/* Name of the per-image descriptor global (a device pointer to the heap). */
#define DEVMALLOC_DESC_SYMBOL "devmalloc_heap_desc"
/* Name of the per-image counter of malloc calls made with no heap bound. */
#define DEVMALLOC_UNBOUND_SYMBOL "devmalloc_unbound_calls"

/* Number of slab size classes reported in devmalloc_stats_t (16 B .. 8 KiB;
 * class_size gives each one's slot size). */
#define DEVMALLOC_NUM_CLASSES 31

typedef enum devmalloc_status {
  DEVMALLOC_OK = 0,
  DEVMALLOC_EINVAL = 1,   /* bad argument */
  DEVMALLOC_ENOMEM = 2,   /* the device could not supply the heap */
  DEVMALLOC_ECUDA = 3,    /* a CUDA driver call failed */
  DEVMALLOC_ENOTFOUND = 4 /* the module holds no devmalloc descriptor */
} devmalloc_status_t;

typedef struct devmalloc_heap devmalloc_heap_t;

typedef struct devmalloc_stats {
  uint64_t heap_bytes;                          /* size of the device allocation behind the heap */
  uint64_t pool_bytes;                          /* bytes of it that can be handed out */
  uint64_t allocs;                              /* successful malloc calls */
  uint64_t frees;                               /* successful free calls */
  uint64_t failures;                            /* malloc calls that returned NULL (out of memory) */
  uint64_t double_frees;                        /* free of a block that was already free */
  uint64_t foreign_frees;                       /* free of a pointer the heap never handed out */
  uint64_t bytes_in_use;                        /* bytes granted (size-class / block rounded), live */
  uint64_t peak_bytes;                          /* peak of pool bytes held by slab chunks and large blocks */
  uint64_t class_size[DEVMALLOC_NUM_CLASSES];   /* slot size of each slab class */
  uint64_t class_allocs[DEVMALLOC_NUM_CLASSES]; /* successful allocations per class */
  uint64_t large_allocs;                        /* successful allocations served by the buddy tree */
  uint64_t footprint_bytes;                     /* pool bytes held by slab chunks and large blocks now */
  uint64_t mapped_bytes;                        /* device bytes mapped for the heap now, metadata included
                             * (heap_bytes for a fixed heap) */
  uint64_t growth_events;                       /* times the heap grew (0: a fixed heap) */
  uint64_t check_failures;   /* check mode: blocks found written past their end when freed */
  uint64_t check_first_bad;  /* device address of the first such block (0: none) */
  uint64_t check_first_size; /* the size that was asked for that block */
  /* a heap that grows (devmalloc_heap_create_growing); fixed heap: max_bytes =
   * pool_bytes, mapped_peak = mapped_bytes, the rest 0 */
  uint64_t max_bytes;     /* most pool bytes it may map (the reserved range) */
  uint64_t mapped_peak;   /* most device bytes mapped at once, metadata included */
  uint64_t grow_waits;    /* device requests that waited for the host to map memory */
  uint64_t grow_timeouts; /* such waits that ended without memory (NULL followed) */
  uint64_t trims;         /* trims that unmapped memory */
  uint64_t trimmed_bytes; /* bytes those trims unmapped */
  uint64_t grows;         /* 1: a heap that grows, 0: a fixed heap */
} devmalloc_stats_t;

/* Create a heap of `bytes` device bytes in context `ctx` (NULL: the current
 * context). The heap is initialized and ready when this returns. */
devmalloc_status_t devmalloc_heap_create(CUcontext ctx, size_t bytes, devmalloc_heap_t **out);

/* A heap that grows (docs/design.md, "A heap that grows"). Fields left 0
 * take the defaults. The pool is a reserved virtual range of `max` bytes;
 * `initial` bytes are mapped at creation and more, `step` at a time, when
 * device code needs it (even while a kernel runs: a service thread of this
 * runtime maps it) or when less than `watermark` bytes are free. */
typedef struct devmalloc_grow_config {
  size_t initial;   /* mapped at creation (0: 64 MiB) */
  size_t max;       /* most pool bytes (0: the device's total memory) */
  size_t step;      /* unit of mapping and trimming, a multiple of 2 MiB (0: 64 MiB) */
  size_t watermark; /* map ahead when less than this, or a quarter of what is
                       * released to the heap if more, is free (0: step) */
  unsigned wait_ms; /* longest wait of a device request for memory (0: 200 ms) */
  unsigned poll_us; /* the service thread's polling period while it has work (0: 50 us);
                       * idle, it backs off to 1 ms (or poll_us if longer) */
  size_t fallback;  /* size of the fixed heap made where the device has no virtual
                       * memory management (0: initial) */
} devmalloc_grow_config_t;

/* Create a heap that grows in `ctx` (NULL: current). Where the device or
 * driver lacks virtual memory management, a fixed heap of cfg->fallback
 * bytes is made instead (devmalloc_heap_grows() says which; *notice, if not
 * NULL, gets a static one-line explanation, or NULL). cfg may be NULL. */
devmalloc_status_t devmalloc_heap_create_growing(CUcontext ctx, const devmalloc_grow_config_t *cfg,
                                                 devmalloc_heap_t **out, const char **notice);

/* 1 for a heap that grows, 0 for a fixed heap. */
int devmalloc_heap_grows(const devmalloc_heap_t *heap);

/* Unmap free memory at the top of a heap that grows, keeping at least
 * `keep` bytes (and its initial size) mapped. No live block moves; only
 * memory above the highest live block can go. Kernels may run meanwhile: a
 * small kernel of the runtime's own on the heap's stream takes the memory
 * back from the heap's tree, then it is unmapped (this call waits for that
 * kernel only). *unmapped (if not NULL) gets the bytes unmapped. A fixed
 * heap: nothing happens. */
devmalloc_status_t devmalloc_heap_trim(devmalloc_heap_t *heap, size_t keep, size_t *unmapped);

/* The same without waiting: the trim kernel is launched and the runtime's
 * service thread unmaps when it has run (nothing happens while a trim is
 * under way). For synchronization points, where waiting for a kernel that
 * may queue behind the program's could stall the caller. */
devmalloc_status_t devmalloc_heap_trim_start(devmalloc_heap_t *heap, size_t keep);

/* Serve every request smaller than `bytes` as a block of `bytes` (0: off,
 * the default; at most 8192). 128 gives each small block a cache line of its
 * own, the spacing some programs rely on without knowing it (docs/design.md,
 * "Programs that read published blocks with plain loads"). The heap must be
 * idle (no kernel using it running). */
devmalloc_status_t devmalloc_heap_set_min_block(devmalloc_heap_t *heap, size_t bytes);

/* Dense small blocks (on != 0): requests are rounded up to 16 bytes instead
 * of 32, so that two small blocks may share a 32-byte sector. Off (the
 * default), no two blocks share a sector, as with the stock allocator, and a
 * program that reads freshly published blocks with plain loads works as it
 * does on stock (docs/design.md, "Programs that read published blocks with
 * plain loads"); on, 16 B requests use half the memory and run faster. The
 * heap must be idle. */
devmalloc_status_t devmalloc_heap_set_dense(devmalloc_heap_t *heap, int on);

/* Check mode (on != 0): every block gets 8 canary bytes after the requested
 * size and a size word at its end (16 bytes more per block), verified when
 * it is freed; damaged blocks are counted in devmalloc_stats_t (check_*), the
 * first one by address. Set it before the first kernel allocates: blocks
 * handed out before carry no canary (docs/options.md, DEVMALLOC_CHECK). */
devmalloc_status_t devmalloc_heap_set_check(devmalloc_heap_t *heap, int on);

/* Write the heap's address into the module's descriptor. Returns
 * DEVMALLOC_ENOTFOUND, and changes nothing, when the module was not linked
 * with devmalloc. */
devmalloc_status_t devmalloc_heap_bind_module(devmalloc_heap_t *heap, CUmodule mod);
devmalloc_status_t devmalloc_heap_bind_library(devmalloc_heap_t *heap, CUlibrary lib);

/* Read the heap's counters (synchronizes with the device memory, not with
 * running kernels: counters of kernels still running may be partial). */
devmalloc_status_t devmalloc_heap_stats(devmalloc_heap_t *heap, devmalloc_stats_t *out);

/* Check the heap's invariants on a copy of its metadata (the heap must be
 * idle: no kernel using it running). DEVMALLOC_EINVAL when inconsistent, with
 * the first violation in `why`. *whole (if not NULL) is set to 1 when every
 * block is free: the tree's free blocks and the empty slab chunks that bins
 * keep (returned to the tree when it runs short) cover the whole pool; when
 * it is 0 on an otherwise consistent heap, `why` says what is still held. */
devmalloc_status_t devmalloc_heap_verify(devmalloc_heap_t *heap, int *whole, char *why, size_t whylen);

/* Device address of the heap descriptor value that bind writes. */
CUdeviceptr devmalloc_heap_device_ptr(const devmalloc_heap_t *heap);
size_t devmalloc_heap_bytes(const devmalloc_heap_t *heap);
CUcontext devmalloc_heap_context(const devmalloc_heap_t *heap);

/* Release the heap's device memory. Modules bound to it must not run again
 * until bound to another heap. */
devmalloc_status_t devmalloc_heap_destroy(devmalloc_heap_t *heap);

/* The heap's context is gone (destroyed, or the primary context's last
 * release): free what the heap holds on the host (a heap that grows: stop its
 * service thread) without calling the driver. */
void devmalloc_heap_abandon(devmalloc_heap_t *heap);

/* Number of device malloc calls a module made while no heap was bound
 * (they returned NULL). DEVMALLOC_ENOTFOUND for modules without devmalloc. */
devmalloc_status_t devmalloc_module_unbound_calls(CUmodule mod, uint64_t *out);

const char *devmalloc_status_string(devmalloc_status_t st);

/* Print a one-paragraph human-readable summary of `s` to `f` (a FILE *). */
void devmalloc_stats_print(const devmalloc_stats_t *s, void *f, const char *title);

#ifdef __cplusplus
}
#endif
#endif /* DEVMALLOC_H */
