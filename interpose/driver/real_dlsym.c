/*
 * real_dlsym.c — the real dlsym, for the shim's own look-ups (libcuda's entry
 * points, libelf's, the interposer's searches) and for dlsym_entry.S's jump.
 *
 * The real dlsym is dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34"), else
 * "GLIBC_2.2.5", looked up on first use. A thread that re-enters the
 * look-up (a wrapper called from inside dlvsym) gets NULL instead of
 * recursing.
 *
 *
 * May call: libc only.
 *
 * Locking: dm_dlsym_real_fn is written with the same value by whoever
 * resolves it first (atomic store); a thread-local re-entrancy flag.
 */
#include "shim.h"

#include <dlfcn.h>

typedef void *(*dlsym_fn)(void *, const char *);
dlsym_fn dm_dlsym_real_fn; /* read by dlsym_entry.S */
static __thread int g_resolving __attribute__((tls_model("initial-exec")));

dlsym_fn dm_dlsym_resolve(void) {
  dlsym_fn f = __atomic_load_n(&dm_dlsym_real_fn, __ATOMIC_ACQUIRE);
  if (f || g_resolving) return f;
  g_resolving = 1;
  f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
  if (!f) f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
  g_resolving = 0;
  if (f) __atomic_store_n(&dm_dlsym_real_fn, f, __ATOMIC_RELEASE);
  return f;
}

void *dm_real_dlsym(void *handle, const char *name) {
  dlsym_fn f = dm_dlsym_resolve();
  return f ? f(handle, name) : NULL;
}
