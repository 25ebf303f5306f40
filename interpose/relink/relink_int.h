/*
 * relink_int.h — what the re-link's two paths share: relink.c (PTX of the
 * module, the options, the cache handle) and relink_rdc.c (an -rdc image's
 * relocatable units). Internal to interpose/relink/.
 *
 * Locking: the options and the cache handle are set once under relink.c's
 * pthread_once (every entry point runs it first) and read-only afterwards;
 * the rest keeps no state.
 */
#ifndef DM_RELINK_INT_H
#define DM_RELINK_INT_H
#include "cache.h"
#include "devmalloc_code.h"
#include "image/fatbin.h"
#include "jit_link.h"
#include <limits.h>
#include <stddef.h>

enum { JIT_OFF, JIT_AUTO, JIT_FORCE };

typedef struct {
  int jit;
  int verbose;
  int sass;                 /* DEVMALLOC_JIT_SASS */
  int inline_calls;         /* DEVMALLOC_JIT_INLINE */
  char cache_dir[PATH_MAX]; /* "" : cache off */
  char cudadevrt[PATH_MAX]; /* DEVMALLOC_CUDADEVRT, "" : look for it */
} relink_opts_t;

const relink_opts_t *dm_relink_opts(void);
void dm_relink_event(int kind, const char *label);

/* The key's parts every re-link shares: devmalloc's version and code (its
 * form and digest), the target, the register cap. */
void dm_relink_key_common(dm_cache_keyer_t *k, const dm_jit_target_t *t, const dm_devmalloc_code_t *dc);

/* The cached image under key (1, *out), else 0 with `note` saying why an
 * entry was not used. `what` names the application's code in the verbose
 * line ("compute_90 PTX"). ahead: a read ahead, whose hit is counted when a
 * load takes it. */
int dm_relink_fetch(const char *label, const char *what, const dm_cache_key_t *key, int ahead,
                    const void **out, size_t *out_size, char *note, size_t notelen);

/* Link in[0..n) (the application's code) with dc (devmalloc's; taken as
 * PTX of arch app_arch instead when a link with its SASS fails) and put the
 * image in the cache under key. 1 with *out, or 0 with why. */
int dm_relink_link(const char *label, const char *what, dm_jit_input_t *in, int n, dm_devmalloc_code_t *dc,
                   unsigned app_arch, const dm_cache_key_t *key, const char *note, const void **out,
                   size_t *out_size, char *why, size_t whylen);

/* relink_rdc.c: re-link the device-linked image `fb` (its ELF entry for the
 * device, loaded: elf, elf_n bytes) from the relocatable units of the file
 * that holds it. */
int dm_relink_rdc(const char *label, const dm_fatbin_t *fb, const unsigned char *elf, size_t elf_n,
                  const dm_jit_target_t *t, int ahead, const void **out, size_t *out_size, char *why,
                  size_t whylen);

#endif
