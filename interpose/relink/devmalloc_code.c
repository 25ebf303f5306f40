/*
 * devmalloc_code.c — devmalloc's device code as a link input
 * (devmalloc_code.h).
 *
 * The SASS is a fatbin of relocatable cubins, one per architecture, built
 * with the device library's flags and register cap (mk/device.mk); a cubin
 * of exactly the device's architecture is taken (a relocatable cubin links
 * only into an image for its own architecture). Otherwise the PTX, built for
 * the oldest supported target, with its `.target` raised to the application
 * PTX's: the linked image takes its PTX version from its inputs, and with a
 * lower one than the application was compiled for, libraries that check it
 * against their compiled architectures (CUB, Thrust) refused their kernels
 * with cudaErrorInvalidDeviceFunction.
 *
 * Locking: none.
 */
#include "devmalloc_code.h"
#include "image/decompress.h"
#include "image/fatbin.h"
#include "image/relink_err.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* devmalloc_ptx.S: the PTX, NUL-terminated, and its SHA-256. */
extern const char dm_devmalloc_ptx[];
extern const char dm_devmalloc_ptx_end[];
extern const unsigned char dm_devmalloc_ptx_sha256[32];
/* devmalloc_sass.S: the fatbin of relocatable cubins, and its SHA-256. */
extern const unsigned char dm_devmalloc_sass[];
extern const unsigned char dm_devmalloc_sass_end[];
extern const unsigned char dm_devmalloc_sass_sha256[32];

#define DM_PTX_LEN ((size_t)(dm_devmalloc_ptx_end - dm_devmalloc_ptx) - 1u)

/* The PTX with `.target` raised to arch, or NULL to use it as built. */
static char *ptx_for(unsigned arch, size_t *len) {
  const char *t = strstr(dm_devmalloc_ptx, "\n.target sm_");
  if (!t || arch <= strtoul(t + strlen("\n.target sm_"), NULL, 10) || arch > 999)
    return NULL; /* at or below the target it was built for: as built */
  const char *eol = strchr(t + 1, '\n');
  if (!eol) return NULL;
  char line[32];
  size_t ln = (size_t)snprintf(line, sizeof line, "\n.target sm_%u", arch);
  size_t head = (size_t)(t - dm_devmalloc_ptx);
  size_t tail = DM_PTX_LEN - (size_t)(eol - dm_devmalloc_ptx);
  char *p = malloc(head + ln + tail + 1);
  if (!p) return NULL;
  memcpy(p, dm_devmalloc_ptx, head);
  memcpy(p + head, line, ln);
  memcpy(p + head + ln, eol, tail);
  p[head + ln + tail] = 0;
  *len = head + ln + tail;
  return p;
}

static int sass_fatbin(dm_fatbin_t *fb) {
  size_t n = (size_t)(dm_devmalloc_sass_end - dm_devmalloc_sass);
  char why[64];
  return n && dm_fatbin_open(dm_devmalloc_sass, n, fb, why, sizeof why) == 0;
}

/* The SASS entry for cc: 1 and *e, else 0. */
static int sass_entry(unsigned cc, dm_fb_entry_t *e) {
  dm_fatbin_t fb;
  if (!sass_fatbin(&fb)) return 0;
  size_t cur = 0;
  char why[64];
  while (dm_fatbin_next(&fb, &cur, e, why, sizeof why) == 1)
    if (e->kind == DM_FB_KIND_ELF && e->arch == cc) return 1;
  return 0;
}

int dm_devmalloc_sass_archs(unsigned *archs, int max) {
  dm_fatbin_t fb;
  if (!sass_fatbin(&fb)) return 0;
  size_t cur = 0;
  dm_fb_entry_t e;
  char why[64];
  int n = 0;
  while (n < max && dm_fatbin_next(&fb, &cur, &e, why, sizeof why) == 1)
    if (e.kind == DM_FB_KIND_ELF) {
      int i = n++;
      while (i > 0 && archs[i - 1] > e.arch) {
        archs[i] = archs[i - 1];
        i--;
      }
      archs[i] = e.arch;
    }
  return n;
}

int dm_devmalloc_code(unsigned cc, unsigned app_arch, int use_sass, dm_devmalloc_code_t *c, char *why,
                      size_t whylen) {
  memset(c, 0, sizeof *c);
  dm_fb_entry_t e;
  if (use_sass && sass_entry(cc, &e)) {
    unsigned char *img;
    size_t n;
    int rc = dm_fb_entry_load(&e, &img, &n, why, whylen);
    if (rc < 0) return rc;
    c->owned = img;
    c->sass = 1;
    c->arch = cc;
    c->digest = dm_devmalloc_sass_sha256;
    c->in = (dm_jit_input_t){"devmalloc.cubin", (const char *)img, n, 0, DM_JIT_IN_CUBIN};
    return 0;
  }
  size_t len = DM_PTX_LEN;
  char *p = ptx_for(app_arch, &len);
  const char *t = strstr(dm_devmalloc_ptx, "\n.target sm_");
  c->owned = p;
  c->arch = p ? app_arch : t ? (unsigned)strtoul(t + 12, NULL, 10) : 0;
  c->digest = dm_devmalloc_ptx_sha256;
  c->in = (dm_jit_input_t){"devmalloc.ptx", p ? p : dm_devmalloc_ptx, len, DM_DEVICE_MAXRREG, DM_JIT_IN_PTX};
  return 0;
}

const char *dm_devmalloc_ptx_text(void) { return dm_devmalloc_ptx; }

void dm_devmalloc_code_free(dm_devmalloc_code_t *c) {
  free(c->owned);
  c->owned = NULL;
}
