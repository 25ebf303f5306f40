/*
 * hooks.c — everything generated from hooks.def: the exported wrappers, the
 * hook table, and the lookups dlsym.c / hook_procaddr.c use to answer
 * dlsym() and cuGetProcAddress(). The real entry points behind the wrappers
 * are real.c's.
 *
 * Each wrapper is exported under the exact driver symbol (asm label, so
 * cuda.h's renaming macros never touch it) and does:
 *     real = dm_real(id); if (!real) return CUDA_ERROR_NOT_INITIALIZED;
 *     if (dm_passthrough()) return real(args);
 *     return handler(real, args);
 *
 * May call: the handlers (hook_*.c), real.c, driver.c (export names),
 * state.c, options/ (the log). The top of the shim: nothing calls into it but
 * the application (the wrappers), dlsym.c and hook_procaddr.c (the lookups).
 * hook_procaddr.c and this file call each other, and that cannot be undone:
 * the cuGetProcAddress handler must answer with a wrapper of this table, and
 * its own wrapper is one of them (static cudart fetches everything, and
 * cuGetProcAddress itself, through it).
 *
 * Locking: none; the tables are const (real.c's pointers are atomics).
 */
#include "shim.h"

#include <string.h>

/* --- exported wrappers ----------------------------------------------------- */
#define DM_HOOK(sym, base, ptds, since, handler, params, args) \
  DM_EXPORT CUresult dm_export_##sym params __asm__(#sym);     \
  DM_EXPORT CUresult dm_export_##sym params {                  \
    dm_pfn_##sym real_ = (dm_pfn_##sym)dm_real(DM_ID_##sym);   \
    if (!real_) return CUDA_ERROR_NOT_INITIALIZED;             \
    if (dm_passthrough()) return real_ args;                   \
    return handler(real_ DM_AFTER_FIRST args);                 \
  }
#include "hooks.def"
#undef DM_HOOK

/* --- the table --------------------------------------------------------------- */
const dm_hook_t dm_hooks[DM_NUM_HOOKS] = {
#define DM_HOOK(sym, base, ptds, since, handler, params, args) \
  [DM_ID_##sym] = {#sym, base, ptds, since, (void *)dm_export_##sym},
#include "hooks.def"
#undef DM_HOOK
};

const dm_alias_t dm_aliases[] = {
#define DM_HOOK(sym, base, ptds, since, handler, params, args)
#define DM_ALIAS(base, ptds, since, sym) {base, ptds, since, DM_ID_##sym},
#include "hooks.def"
#undef DM_HOOK
    {NULL, 0, 0, -1}};
const size_t dm_num_aliases = sizeof dm_aliases / sizeof dm_aliases[0] - 1;

int dm_hook_by_sym(const char *sym) {
  if (!sym || sym[0] != 'c' || sym[1] != 'u') return -1;
  for (int i = 0; i < DM_NUM_HOOKS; i++)
    if (!strcmp(dm_hooks[i].sym, sym)) return i;
  return -1;
}

int dm_hook_by_ptr(const void *hook) {
  for (int i = 0; i < DM_NUM_HOOKS; i++)
    if (dm_hooks[i].hook == hook) return i;
  return -1;
}

int dm_hook_by_real(const void *real) {
  if (!real) return -1;
  for (int i = 0; i < DM_NUM_HOOKS; i++)
    if (dm_real((dm_hook_id_t)i) == real) return i;
  return -1;
}

/* Name fallback: the entry (or alias) with this base name and stream flavour
 * whose `since` is the highest not above cuda_version. */
int dm_hook_by_base(const char *base, int cuda_version, uint64_t flags) {
  int want_ptds = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  for (int pass = want_ptds; pass >= 0; pass--) { /* ptds first, then legacy */
    int best = -1, best_since = -1;
    for (int i = 0; i < DM_NUM_HOOKS; i++) {
      const dm_hook_t *h = &dm_hooks[i];
      if (h->ptds == pass && h->since <= cuda_version && h->since > best_since && !strcmp(h->base, base)) {
        best = i;
        best_since = h->since;
      }
    }
    for (size_t a = 0; a < dm_num_aliases; a++) {
      const dm_alias_t *al = &dm_aliases[a];
      if (al->ptds == pass && al->since <= cuda_version && al->since > best_since &&
          !strcmp(al->base, base)) {
        best = al->id;
        best_since = al->since;
      }
    }
    if (best >= 0) return best;
    /* a symbol without a per-thread variant answers the legacy one */
    if (pass == 1) {
      int has_ptds = 0;
      for (int i = 0; i < DM_NUM_HOOKS; i++)
        if (dm_hooks[i].ptds && !strcmp(dm_hooks[i].base, base)) has_ptds = 1;
      if (has_ptds) return -1;
    }
  }
  return -1;
}

void *dm_hook_answer(const char *symbol, void *real, int cuda_version, uint64_t flags) {
  if (!real || !symbol) return real;
  if (dm_hook_by_ptr(real) >= 0) return real; /* already ours */
  int id = dm_hook_by_real(real);             /* exact: the driver chose it */
  if (id < 0) {
    /* An exported driver function we do not hook (another version, say)
     * is never replaced; only a pointer that names no export at all falls
     * back to the name rules of hooks.def. */
    const char *exported = dm_driver_export_name(real);
    if (exported) {
      id = dm_hook_by_sym(exported);
      if (id < 0) return real;
      dm_real_offer((dm_hook_id_t)id, real);
    } else {
      id = dm_hook_by_base(symbol, cuda_version, flags);
      if (id < 0) return real;
      dm_log(DM_LOG_DEBUG, "cuGetProcAddress(%s): unexported pointer %p taken as %s", symbol, real,
             dm_hooks[id].sym);
    }
  }
  return dm_hooks[id].hook;
}
