/*
 * ptx_scan.h — a small tokenizer over PTX text that finds the module-level
 * declarations that matter to the re-link: `.extern .func ... malloc` (and
 * free, the aligned entry point), a definition of `malloc`, the
 * `devmalloc_heap_desc` global, `.version` and `.target`, and functions of
 * the device runtime (dm_is_devrt_symbol, cubin_elf.h) declared or defined.
 *
 * Works on tokens, not exact text: the PTX in a fatbin is whitespace-
 * normalized. Used when a fatbin carries no ELF to read symbols from; the
 * cubin's symbol table (cubin_elf.h) is preferred when there is one.
 *
 * Errors: relink_err.h. Locking: none.
 */
#ifndef DM_PTX_SCAN_H
#define DM_PTX_SCAN_H
#include <stddef.h>

typedef struct {
  unsigned version_major, version_minor; /* .version */
  unsigned target_sm;                    /* .target sm_XX, 0 if absent */
  int extern_malloc, extern_free, extern_aligned;
  int defines_malloc, defines_free, defines_aligned;
  int has_heap_desc;
  int extern_devrt, defines_devrt; /* device-runtime functions */
} dm_ptx_info_t;

/* Scan len bytes of PTX text (stops at a NUL). */
int dm_ptx_scan(const char *ptx, size_t len, dm_ptx_info_t *info);

static inline int dm_ptx_uses_stock_malloc(const dm_ptx_info_t *i) {
  return i->extern_malloc || i->extern_free || i->extern_aligned;
}

static inline int dm_ptx_has_devmalloc(const dm_ptx_info_t *i) {
  return i->defines_malloc && i->has_heap_desc;
}

#endif
