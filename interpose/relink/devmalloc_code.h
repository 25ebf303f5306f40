/*
 * devmalloc_code.h — devmalloc's own device code as a link input: its
 * relocatable SASS for the device's architecture when the shim carries it
 * (devmalloc_sass.S: no compile at all), else its PTX (devmalloc_ptx.S),
 * with `.target` raised to the application's and the register cap of the
 * calling convention (docs/design.md, "Calling convention"; the SASS was
 * compiled under the same cap, mk/device.mk).
 *
 * Errors: relink_err.h. Locking: none; the embedded code is read-only and
 * each call returns its own copy.
 */
#ifndef DM_DEVMALLOC_CODE_H
#define DM_DEVMALLOC_CODE_H
#include "jit_link.h"
#include <stddef.h>

typedef struct {
  dm_jit_input_t in;           /* the link input */
  int sass;                    /* 1: relocatable SASS, 0: PTX */
  unsigned arch;               /* sm_ arch of the SASS, or the PTX's .target */
  const unsigned char *digest; /* SHA-256 of the embedded product, for keys */
  void *owned;                 /* freed by dm_devmalloc_code_free */
} dm_devmalloc_code_t;

/* devmalloc's code for a link for a device of compute capability cc whose
 * application code is (at most) PTX of arch app_arch (0: SASS only).
 * use_sass: 0 takes the PTX even when SASS for cc is there. 0, or a negative
 * error (out of memory, a damaged embedded fatbin). */
int dm_devmalloc_code(unsigned cc, unsigned app_arch, int use_sass, dm_devmalloc_code_t *c, char *why,
                      size_t whylen);
void dm_devmalloc_code_free(dm_devmalloc_code_t *c);

/* devmalloc's PTX as built (NUL-terminated): where ptx_inline.c takes the
 * body of dm_free_common from, the same build as the SASS. */
const char *dm_devmalloc_ptx_text(void);

/* The archs the embedded SASS covers, ascending, at most max; their count. */
int dm_devmalloc_sass_archs(unsigned *archs, int max);

#endif
