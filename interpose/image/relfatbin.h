/*
 * relfatbin.h — the relocatable device code an `-rdc` program keeps beside
 * its device-linked image, and the plan to link it again.
 *
 * An executable or shared library built with separate compilation holds the
 * image nvlink made in `.nv_fatbin` (SASS, no PTX) and every translation
 * unit's relocatable code in `__nv_relfatbin`: one fatbin per unit, with
 * relocatable cubins (ET_REL) for the archs it was built for, its PTX, and
 * for `-dlto` builds its NVVM IR (entry kind 8). Static libraries linked in
 * (libcudadevrt for dynamic parallelism among them) add their units too.
 *
 *   elf_origin.c   which loaded ELF file holds an address (dl_iterate_phdr),
 *                  and its section table read from the file
 *   relfatbin.c    per unit, the input for a device (relocatable SASS of its
 *                  arch, else the highest PTX not above it) and what the set
 *                  needs (stock malloc calls, the device runtime, kernels)
 *
 * Errors: relink_err.h. Locking: none; the plan is the caller's.
 */
#ifndef DM_RELFATBIN_H
#define DM_RELFATBIN_H
#include "fatbin.h"
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define DM_RELFATBIN_SECTION "__nv_relfatbin"
#define DM_FATBIN_SECTION ".nv_fatbin"
#define DM_FB_KIND_NVVM 8u /* LTO IR (-dlto) */
#define DM_REL_MAX_UNITS 65536u

/* ---- elf_origin.c ---------------------------------------------------------- */
typedef struct {
  uint64_t addr, size; /* section's link-time address, bytes */
  uint64_t offset;     /* in the file */
  int found, alloc;    /* present; SHF_ALLOC (mapped with the file) */
} dm_elf_sec_t;

typedef struct {
  dm_elf_sec_t fatbin;    /* .nv_fatbin */
  dm_elf_sec_t relfatbin; /* __nv_relfatbin */
} dm_elf_cuda_secs_t;

/* The sections of the ELF file open at fd (read with pread, bounds-checked).
 * 0, or a negative error (not a 64-bit ELF, tables out of bounds). */
int dm_elf_cuda_sections(int fd, dm_elf_cuda_secs_t *s, char *why, size_t whylen);

typedef struct {
  char path[PATH_MAX];      /* the file ("/proc/self/exe" for the program) */
  uintptr_t bias;           /* load bias: run-time address - link-time address */
  uintptr_t lo[16], hi[16]; /* its readable PT_LOAD ranges */
  int nloads;
} dm_elf_origin_t;

/* The loaded object whose readable segments hold addr: 1 and *o, or 0. */
int dm_elf_origin(const void *addr, dm_elf_origin_t *o);
/* n bytes at p lie inside one of o's readable segments. */
int dm_elf_origin_maps(const dm_elf_origin_t *o, uintptr_t p, size_t n);

/* The relocatable code that goes with the device-linked image at `image`:
 * the __nv_relfatbin section of the file that holds it, in memory (*sec,
 * *len point into the mapped file; nothing to free). 1 when found; 0 with
 * `why` when the image is no file's (a buffer), its file has no
 * __nv_relfatbin, or the image is not inside that file's .nv_fatbin. */
int dm_relfatbin_of(const void *image, const void **sec, size_t *len, char *path, size_t pathlen, char *why,
                    size_t whylen);

/* ---- relfatbin.c ----------------------------------------------------------- */
enum { DM_REL_SASS = 1, DM_REL_PTX = 2 };

typedef struct {
  int form;            /* DM_REL_SASS (relocatable cubin) or DM_REL_PTX */
  unsigned arch;       /* sm_/compute_ arch of the entry used */
  unsigned char *data; /* decompressed; PTX NUL-terminated (not counted) */
  size_t size;
} dm_rel_unit_t;

typedef struct {
  dm_rel_unit_t *units;
  unsigned n; /* units with an input for the device */
  unsigned nsass, nptx;
  unsigned nfatbins;           /* fatbins in the section */
  unsigned lto_only;           /* units with only NVVM IR usable for the device */
  unsigned unusable;           /* units with nothing usable for the device */
  unsigned first_missing_arch; /* an arch the unusable ones have (0: none) */
  unsigned ptx_arch_max;       /* highest PTX arch used, 0 if none */
  int uses_stock;              /* some unit calls the stock malloc/free */
  int has_devmalloc;           /* devmalloc is among the units already */
  int needs_devrt;             /* calls the device runtime, no unit defines it */
} dm_rel_plan_t;

/* Choose the input of every unit in the section for a device of compute
 * capability cc (e.g. 90): its relocatable cubin of exactly that arch, else
 * its PTX of the highest arch <= cc. 0 with *plan (units decompressed: free
 * with dm_rel_plan_free), or a negative error for a malformed section or
 * entry. A plan with unusable or lto_only units cannot be linked. */
int dm_rel_plan(const void *sec, size_t len, unsigned cc, dm_rel_plan_t *plan, char *why, size_t whylen);
void dm_rel_plan_free(dm_rel_plan_t *plan);

/* Every kernel of the device-linked image `img` (a cubin) is defined by some
 * unit of the plan: the image was linked from these units (and is not some
 * other translation unit's image that happens to sit in the same file).
 * 1 yes, 0 no (`why` names the kernel), negative on an unreadable image. */
int dm_rel_plan_covers(const dm_rel_plan_t *plan, const void *img, size_t len, char *why, size_t whylen);

#endif
