/*
 * relink_rdc.c — re-link of a device-linked (-rdc) image from the
 * relocatable code its file keeps (relink_int.h, docs/jit.md).
 *
 * A module given as SASS without PTX that calls the stock allocator is
 * looked up in the loaded ELF file that holds it (image/relfatbin.h): when
 * the image lies in that file's .nv_fatbin and the file has __nv_relfatbin,
 * the device link is done again through the driver's linker: every unit's
 * relocatable cubin for the device's arch (no compile) or its PTX, with
 * devmalloc's code (its SASS for the arch, else its PTX:
 * devmalloc_code.h) and, when the units call the device runtime without
 * carrying it, libcudadevrt.a. Every kernel of the original image must be
 * defined by the units (else the image is some other unit's, and the
 * re-link would lose kernels). Units of NVVM IR only (-dlto without PTX)
 * cannot be linked by the driver: the module keeps its stock image, and
 * the reason says so (the shim warns once at default verbosity).
 *
 * The cache key covers every unit's input (form, arch, bytes), the device
 * runtime's file (path, size, time) when it is linked, and what every
 * re-link's key covers (dm_relink_key_common). Every refusal's reason says
 * "no PTX" (the shim's notice of modules that keep the stock allocator
 * recognizes them by it).
 *
 * Locking: none of its own (relink_int.h).
 */
#include "relink_int.h"
#include "image/decompress.h"
#include "image/relfatbin.h"
#include "image/relink_err.h"
#include "options/log.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef DM_CUDADEVRT_DEFAULT
#define DM_CUDADEVRT_DEFAULT "/usr/local/cuda/lib64/libcudadevrt.a"
#endif

/* libcudadevrt.a: the option's, the build's toolkit's, $CUDA_HOME's, the
 * usual place's; 1 with path and *st, else 0. */
static int find_cudadevrt(char *path, size_t len, struct stat *st) {
  const char *opt = dm_relink_opts()->cudadevrt;
  const char *home = secure_getenv("CUDA_HOME");
  char from_home[PATH_MAX] = "";
  if (home && home[0] == '/') snprintf(from_home, sizeof from_home, "%s/lib64/libcudadevrt.a", home);
  const char *cand[] = {opt, DM_CUDADEVRT_DEFAULT, from_home, "/usr/local/cuda/lib64/libcudadevrt.a"};
  for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++) {
    if (!cand[i][0] || strlen(cand[i]) >= len) continue;
    if (stat(cand[i], st) == 0 && S_ISREG(st->st_mode) && access(cand[i], R_OK) == 0) {
      strcpy(path, cand[i]);
      return 1;
    }
    if (i == 0) return 0; /* the one asked for, or none */
  }
  return 0;
}

static void make_key(const dm_rel_plan_t *p, const char *devrt, const struct stat *devrt_st,
                     const dm_jit_target_t *t, const dm_devmalloc_code_t *dc, dm_cache_key_t *key) {
  dm_cache_keyer_t k;
  dm_cache_key_init(&k, "devmalloc-rdc-v1");
  dm_cache_key_add_u64(&k, p->n);
  for (unsigned i = 0; i < p->n; i++) {
    dm_cache_key_add_u64(&k, (uint64_t)p->units[i].form << 32 | p->units[i].arch);
    dm_cache_key_add_u64(&k, p->units[i].size);
    dm_cache_key_add(&k, p->units[i].data, p->units[i].size);
  }
  dm_cache_key_add_str(&k, devrt ? devrt : "");
  if (devrt) {
    dm_cache_key_add_u64(&k, (uint64_t)devrt_st->st_size);
    dm_cache_key_add_u64(&k, (uint64_t)devrt_st->st_mtim.tv_sec);
    dm_cache_key_add_u64(&k, (uint64_t)devrt_st->st_mtim.tv_nsec);
  }
  dm_relink_key_common(&k, t, dc);
  dm_cache_key_final(&k, key);
}

/* Why the plan cannot be linked, or 0 when it can. */
static int plan_refused(const char *label, const char *file, const dm_rel_plan_t *p, unsigned cc, char *why,
                        size_t whylen) {
  if (p->lto_only)
    return dm_fail(1, why, whylen,
                   "%s: SASS only (no PTX); %s: %u of its relocatable units "
                   "are LTO (NVVM IR, -dlto), which the driver's linker cannot link",
                   label, file, p->lto_only);
  if (p->unusable)
    return dm_fail(1, why, whylen,
                   "%s: SASS only (no PTX); %s: %u relocatable units have "
                   "neither sm_%u code nor PTX <= compute_%u (one has arch %u)",
                   label, file, p->unusable, cc, cc, p->first_missing_arch);
  if (!p->n) return dm_fail(1, why, whylen, "%s: SASS only (no PTX); %s: no relocatable units", label, file);
  return 0;
}

static int link_plan(const char *label, const char *what, const dm_rel_plan_t *p, const char *devrt,
                     const dm_jit_target_t *t, dm_devmalloc_code_t *dc, const dm_cache_key_t *key,
                     const char *note, const void **out, size_t *out_size, char *why, size_t whylen) {
  dm_jit_input_t *in = calloc((size_t)p->n + 2, sizeof *in);
  if (!in) return dm_fail(0, why, whylen, "%s: out of memory", label);
  int n = 0;
  for (unsigned i = 0; i < p->n; i++) {
    const dm_rel_unit_t *u = &p->units[i];
    int sass = u->form == DM_REL_SASS;
    in[n++] = (dm_jit_input_t){sass ? "unit.cubin" : "unit.ptx", (const char *)u->data,
                               sass ? u->size : strnlen((const char *)u->data, u->size), 0,
                               sass ? DM_JIT_IN_CUBIN : DM_JIT_IN_PTX};
  }
  if (devrt) in[n++] = (dm_jit_input_t){"libcudadevrt.a", devrt, 0, 0, DM_JIT_IN_LIBRARY};
  unsigned cc = (unsigned)(t->cc_major * 10 + t->cc_minor);
  int r = dm_relink_link(label, what, in, n, dc, p->ptx_arch_max ? p->ptx_arch_max : cc, key, note, out,
                         out_size, why, whylen);
  free(in);
  return r;
}

/* The plan for the image, checked: 1 when it can be linked. */
static int plan_for(const char *label, const dm_fatbin_t *fb, const unsigned char *elf, size_t elf_n,
                    unsigned cc, dm_rel_plan_t *p, char *file, size_t filelen, char *why, size_t whylen) {
  const void *sec;
  size_t len;
  char ewhy[PATH_MAX + 160];
  if (!dm_relfatbin_of(fb->data, &sec, &len, file, filelen, ewhy, sizeof ewhy))
    return dm_fail(0, why, whylen,
                   "%s: no PTX in the fatbin (SASS only cannot be re-linked) "
                   "and no relocatable code for it: %s",
                   label, ewhy);
  if (dm_rel_plan(sec, len, cc, p, ewhy, sizeof ewhy) < 0)
    return dm_fail(0, why, whylen, "%s: SASS only (no PTX); %s: " DM_RELFATBIN_SECTION " unreadable: %s",
                   label, file, ewhy);
  if (plan_refused(label, file, p, cc, why, whylen)) return 0;
  if (p->has_devmalloc) return dm_fail(0, why, whylen, "%s: already linked with devmalloc", label);
  if (dm_rel_plan_covers(p, elf, elf_n, ewhy, sizeof ewhy) != 1)
    return dm_fail(0, why, whylen,
                   "%s: SASS only (no PTX); not linked from %s's "
                   "relocatable code: %s",
                   label, file, ewhy);
  return 1;
}

int dm_relink_rdc(const char *label, const dm_fatbin_t *fb, const unsigned char *elf, size_t elf_n,
                  const dm_jit_target_t *t, int ahead, const void **out, size_t *out_size, char *why,
                  size_t whylen) {
  unsigned cc = (unsigned)(t->cc_major * 10 + t->cc_minor);
  char file[PATH_MAX];
  dm_rel_plan_t p = {0};
  if (!plan_for(label, fb, elf, elf_n, cc, &p, file, sizeof file, why, whylen)) {
    dm_rel_plan_free(&p);
    return 0;
  }
  char devrt[PATH_MAX];
  struct stat devrt_st;
  int r = 0;
  if (p.needs_devrt && !find_cudadevrt(devrt, sizeof devrt, &devrt_st)) {
    r = dm_fail(0, why, whylen,
                "%s: SASS only (no PTX); its relocatable code launches "
                "kernels from the device and libcudadevrt.a was not found (DEVMALLOC_CUDADEVRT)",
                label);
    dm_rel_plan_free(&p);
    return r;
  }
  char what[PATH_MAX + 96], note[PATH_MAX + 160] = "", real[PATH_MAX];
  ssize_t rn;
  if (!strcmp(file, "/proc/self/exe") && (rn = readlink(file, real, sizeof real - 1)) > 0) {
    real[rn] = 0; /* the program's own name in the messages */
    memcpy(file, real, (size_t)rn + 1);
  }
  const char *base = strrchr(file, '/');
  snprintf(what, sizeof what, "relocatable code of %u units (%u sm_%u SASS, %u PTX%s) of %s", p.n, p.nsass,
           cc, p.nptx, p.needs_devrt ? ", libcudadevrt" : "", base ? base + 1 : file);
  dm_devmalloc_code_t dc;
  if (dm_devmalloc_code(cc, p.ptx_arch_max ? p.ptx_arch_max : cc, dm_relink_opts()->sass, &dc, why, whylen) ==
      0) {
    dm_cache_key_t key;
    make_key(&p, p.needs_devrt ? devrt : NULL, &devrt_st, t, &dc, &key);
    if (dm_relink_fetch(label, what, &key, ahead, out, out_size, note, sizeof note))
      r = 1;
    else if (ahead)
      r = dm_fail(0, why, whylen, "%s: not in the cache (%s)", label, note[0] ? note : "cache miss");
    else if (!(r = link_plan(label, what, &p, p.needs_devrt ? devrt : NULL, t, &dc, &key, note, out, out_size,
                             why, whylen)) &&
             !strstr(why, "PTX")) {
      char lwhy[512];
      snprintf(lwhy, sizeof lwhy, "%s", why);
      dm_fail(0, why, whylen,
              "%s: SASS only (no PTX); linking its relocatable code "
              "failed: %s",
              label, lwhy);
    }
    dm_devmalloc_code_free(&dc);
  }
  dm_rel_plan_free(&p);
  return r;
}
