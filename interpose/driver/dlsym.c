/*
 * dlsym.c — interpose dlsym() so that programs that reach the driver through
 * dlopen("libcuda.so.1") + dlsym (static and shared cudart) get our hooks.
 *
 * The exported entry is dlsym_entry.S: every name that does not start with
 * "cu" is a tail jump to the real dlsym, so glibc answers it exactly as it
 * would without the shim (RTLD_NEXT relative to the real caller), at the cost
 * of two compares. Sanitizer runtimes, malloc wrappers and profilers resolve
 * their symbols through that path while they and the loader are still
 * setting up; it runs no loader call, takes no lock and allocates nothing.
 *
 * A "cu" name comes here (dm_dlsym_cu, still with the caller's return
 * address). The real lookup runs first, with glibc's rules reproduced from
 * the caller: RTLD_NEXT searches the objects after the caller's, RTLD_DEFAULT
 * the global scope and then the caller's own (an RTLD_LOCAL object). An
 * object is searched through a handle from dlopen(RTLD_NOLOAD) of its path:
 * that runs only for "cu" names, i.e. in a process that is reaching for the
 * driver, long after the loader and other interposers (whose malloc or dlopen
 * wrappers it may enter; they resolve their own names through the jump path
 * above) are set up. A thread that comes back here from inside that work is
 * answered relative to the shim, without the search. If the name is a hook
 * (hooks.def) and the lookup found the driver's function, that pointer is
 * recorded as the real entry point and our wrapper is returned instead.
 *
 * The real dlsym is real_dlsym.c's.
 *
 * May call: hooks.c (table lookups), real.c (dm_real_offer), real_dlsym.c,
 * options/. Called by: dlsym_entry.S only.
 *
 * Locking: a thread-local re-entrancy flag; otherwise stateless.
 */
#include "shim.h"

#include <dlfcn.h>
#include <link.h>
#include <string.h>

static __thread int g_searching __attribute__((tls_model("initial-exec")));

static struct link_map *object_of(const void *addr) {
  Dl_info di;
  struct link_map *l = NULL;
  if (!dladdr1(addr, &di, (void **)&l, RTLD_DL_LINKMAP)) return NULL;
  return l;
}

/* Symbol `name` in object `l`'s own scope (itself and its dependencies). */
static void *sym_in_scope(struct link_map *l, const char *name) {
  if (!l->l_name || !l->l_name[0]) return NULL; /* main program: no path */
  void *h = dlopen(l->l_name, RTLD_LAZY | RTLD_NOLOAD);
  if (!h) return NULL;
  void *p = dm_real_dlsym(h, name);
  dlclose(h);
  return p;
}

/* Symbol `name` defined in object `l` itself. */
static void *sym_in_object(struct link_map *l, const char *name) {
  void *p = sym_in_scope(l, name);
  return p && object_of(p) == l ? p : NULL;
}

/* RTLD_NEXT relative to `caller`: first definition in the objects after it. */
static void *next_after(const void *caller, const char *name) {
  struct link_map *l = object_of(caller);
  if (!l) return dm_real_dlsym(RTLD_NEXT, name);
  for (l = l->l_next; l; l = l->l_next) {
    void *p = sym_in_object(l, name);
    if (p) return p;
  }
  return NULL;
}

/* RTLD_DEFAULT as the caller sees it: global scope, then the caller's own. */
static void *default_for(const void *caller, const char *name) {
  void *p = dm_real_dlsym(RTLD_DEFAULT, name);
  if (p) return p;
  struct link_map *l = object_of(caller);
  return l ? sym_in_scope(l, name) : NULL;
}

void *dm_dlsym_cu(void *handle, const char *name) {
  const void *caller = __builtin_return_address(0);
  void *p;
  if (g_searching) return dm_real_dlsym(handle, name);
  g_searching = 1;
  if (handle == RTLD_NEXT)
    p = next_after(caller, name);
  else if (handle == RTLD_DEFAULT)
    p = default_for(caller, name);
  else
    p = dm_real_dlsym(handle, name);
  g_searching = 0;
  if (!p) return p;
  int id = dm_hook_by_sym(name);
  if (id < 0 || dm_hook_by_ptr(p) >= 0) return p;
  dm_real_offer((dm_hook_id_t)id, p);
  if (dm_options()->disable) return p;
  return dm_hooks[id].hook;
}
