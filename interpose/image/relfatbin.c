/*
 * relfatbin.c — the plan to link an `-rdc` program's relocatable units again
 * for one device (relfatbin.h).
 *
 * Per unit (one fatbin of the section): the relocatable cubin of exactly the
 * device's arch, which needs no compile, else the PTX of the highest arch not
 * above it (compiled by the JIT at the link). A relocatable cubin of another
 * arch cannot be linked for this device, and NVVM IR (-dlto) needs nvJitLink:
 * such units make the plan unusable, and the module keeps its stock image.
 * What the units say about device malloc and the device runtime is read from
 * the symbol tables of their cubins (cubin_elf.h), or from their PTX
 * declarations (ptx_scan.h).
 *
 * Locking: none.
 */
#include "relfatbin.h"
#include "cubin_elf.h"
#include "decompress.h"
#include "ptx_scan.h"
#include "relink_err.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  dm_fb_entry_t sass, ptx;
  int have_sass, have_ptx, have_nvvm;
  unsigned any_arch;
} unit_pick_t;

static int pick_unit(const dm_fatbin_t *fb, unsigned cc, unit_pick_t *u, unsigned *nentries, char *why,
                     size_t whylen) {
  memset(u, 0, sizeof *u);
  size_t cur = 0;
  dm_fb_entry_t e;
  int rc;
  while ((rc = dm_fatbin_next(fb, &cur, &e, why, whylen)) == 1) {
    (*nentries)++;
    if (!u->any_arch) u->any_arch = e.arch;
    if (e.kind == DM_FB_KIND_ELF && e.arch == cc && !u->have_sass) {
      u->sass = e;
      u->have_sass = 1;
    } else if (e.kind == DM_FB_KIND_PTX && e.arch <= cc && (!u->have_ptx || e.arch > u->ptx.arch)) {
      u->ptx = e;
      u->have_ptx = 1;
    } else if (e.kind == DM_FB_KIND_NVVM) {
      u->have_nvvm = 1;
    }
  }
  return rc;
}

/* Load the unit's chosen entry and note what it calls and defines. */
static int load_unit(const unit_pick_t *u, dm_rel_unit_t *out, dm_rel_plan_t *p, int *calls_devrt,
                     int *defines_devrt, char *why, size_t whylen) {
  const dm_fb_entry_t *e = u->have_sass ? &u->sass : &u->ptx;
  int rc = dm_fb_entry_load(e, &out->data, &out->size, why, whylen);
  if (rc < 0) return rc;
  out->form = u->have_sass ? DM_REL_SASS : DM_REL_PTX;
  out->arch = e->arch;
  if (out->form == DM_REL_SASS) {
    dm_cubin_info_t ci;
    if ((rc = dm_cubin_inspect(out->data, out->size, &ci, why, whylen)) < 0) return rc;
    if (!ci.relocatable) return dm_fail(-EINVAL, why, whylen, "sm_%u cubin is not relocatable", e->arch);
    p->uses_stock |= dm_cubin_uses_stock_malloc(&ci);
    p->has_devmalloc |= dm_cubin_has_devmalloc(&ci);
    *calls_devrt |= ci.calls_devrt;
    *defines_devrt |= ci.defines_devrt;
    p->nsass++;
  } else {
    dm_ptx_info_t pi;
    dm_ptx_scan((const char *)out->data, out->size, &pi);
    p->uses_stock |= dm_ptx_uses_stock_malloc(&pi);
    p->has_devmalloc |= dm_ptx_has_devmalloc(&pi);
    *calls_devrt |= pi.extern_devrt;
    *defines_devrt |= pi.defines_devrt;
    if (e->arch > p->ptx_arch_max) p->ptx_arch_max = e->arch;
    p->nptx++;
  }
  return 0;
}

int dm_rel_plan(const void *sec, size_t len, unsigned cc, dm_rel_plan_t *plan, char *why, size_t whylen) {
  memset(plan, 0, sizeof *plan);
  size_t off = 0, cap = 0;
  dm_fatbin_t fb;
  int rc, calls_devrt = 0, defines_devrt = 0;
  while ((rc = dm_fatbin_next_in_section(sec, len, &off, &fb, why, whylen)) == 1) {
    unit_pick_t u;
    unsigned nentries = 0;
    plan->nfatbins++;
    if ((rc = pick_unit(&fb, cc, &u, &nentries, why, whylen)) < 0) break;
    if (!nentries) continue; /* a unit without device code */
    if (!u.have_sass && !u.have_ptx) {
      if (u.have_nvvm)
        plan->lto_only++;
      else
        plan->unusable++;
      if (!plan->first_missing_arch) plan->first_missing_arch = u.any_arch;
      continue;
    }
    if (plan->n == cap) {
      if (cap >= DM_REL_MAX_UNITS) {
        rc = dm_fail(-E2BIG, why, whylen, "more than %u relocatable units", DM_REL_MAX_UNITS);
        break;
      }
      size_t ncap = cap ? cap * 2 : 8;
      dm_rel_unit_t *nu = realloc(plan->units, ncap * sizeof *nu);
      if (!nu) {
        rc = dm_fail(-ENOMEM, why, whylen, "out of memory");
        break;
      }
      plan->units = nu;
      cap = ncap;
    }
    dm_rel_unit_t *out = &plan->units[plan->n];
    memset(out, 0, sizeof *out);
    rc = load_unit(&u, out, plan, &calls_devrt, &defines_devrt, why, whylen);
    if (out->data) plan->n++; /* owned by the plan from here, even when rc < 0 */
    if (rc < 0) break;
  }
  if (rc < 0) {
    dm_rel_plan_free(plan);
    return rc;
  }
  plan->needs_devrt = calls_devrt && !defines_devrt;
  return 0;
}

void dm_rel_plan_free(dm_rel_plan_t *plan) {
  for (unsigned i = 0; i < plan->n; i++) free(plan->units[i].data);
  free(plan->units);
  memset(plan, 0, sizeof *plan);
}

static int ident(unsigned char c) { return isalnum(c) || c == '_' || c == '$' || c == '.'; }

/* The name occurs in the unit as a whole word: a string of a cubin's string
 * table (NUL on both sides), a name in PTX text (no identifier character on
 * either side). */
static int unit_mentions(const dm_rel_unit_t *u, const char *name, size_t n) {
  const unsigned char *b = u->data, *end = u->data + u->size;
  while (b < end && (size_t)(end - b) >= n) {
    const unsigned char *hit = memmem(b, (size_t)(end - b), name, n);
    if (!hit) return 0;
    int before = hit == u->data ? 0 : hit[-1];
    int after = hit + n < end ? hit[n] : 0;
    if (u->form == DM_REL_SASS ? before == 0 && after == 0 : !ident(before) && !ident(after)) return 1;
    b = hit + 1;
  }
  return 0;
}

typedef struct {
  const dm_rel_plan_t *plan;
  const char *missing;
  char name[256];
} cover_t;

static int check_kernel(const char *name, void *arg) {
  cover_t *c = arg;
  size_t n = strlen(name);
  for (unsigned i = 0; i < c->plan->n; i++)
    if (unit_mentions(&c->plan->units[i], name, n)) return 0;
  snprintf(c->name, sizeof c->name, "%s", name);
  c->missing = c->name;
  return 1;
}

int dm_rel_plan_covers(const dm_rel_plan_t *plan, const void *img, size_t len, char *why, size_t whylen) {
  cover_t c = {plan, NULL, ""};
  int rc = dm_cubin_kernels(img, len, check_kernel, &c, why, whylen);
  if (rc < 0) return rc;
  if (c.missing) return dm_fail(0, why, whylen, "kernel %s is in none of the relocatable units", c.missing);
  return 1;
}
