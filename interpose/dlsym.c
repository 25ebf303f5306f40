/*
 * dlsym.c — interpose dlsym() so that programs that reach the driver through
 * dlopen("libcuda.so.1") + dlsym (static and shared cudart) get our hooks.
 *
 * For a name in hooks.def the real lookup runs first; if it found the
 * driver's function, that pointer is recorded as the real entry point and our
 * wrapper is returned instead. Every other name is answered exactly as glibc
 * would, including RTLD_NEXT (searched from the caller's object onward, not
 * from ours) and RTLD_DEFAULT from an object loaded RTLD_LOCAL (its own
 * scope is searched when the global scope has no answer).
 *
 * The real dlsym comes from dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34"), else
 * "GLIBC_2.2.5". Nothing here reads options unless the name is a hooked one,
 * so the function is safe to call at any time, from any thread.
 *
 * Locking: pthread_once for the real pointer; otherwise stateless.
 */
#include "shim.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>

typedef void *(*dlsym_fn)(void *, const char *);
static dlsym_fn g_real_dlsym;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void init_real(void) {
  g_real_dlsym = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
  if (!g_real_dlsym) g_real_dlsym = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
}

void *dm_real_dlsym(void *handle, const char *name) {
  pthread_once(&g_once, init_real);
  return g_real_dlsym ? g_real_dlsym(handle, name) : NULL;
}

/* Symbol `name` defined in object `l` itself (not its dependencies). */
static void *sym_in_object(struct link_map *l, const char *name) {
  if (!l->l_name || !l->l_name[0]) return NULL;   /* main program: no path */
  void *h = dlopen(l->l_name, RTLD_LAZY | RTLD_NOLOAD);
  if (!h) return NULL;
  void *p = dm_real_dlsym(h, name);
  dlclose(h);
  Dl_info di;
  struct link_map *owner = NULL;
  if (p && dladdr1(p, &di, (void **)&owner, RTLD_DL_LINKMAP) && owner == l) return p;
  return NULL;
}

/* RTLD_NEXT relative to `caller`: first definition in the objects after it. */
static void *next_after(const void *caller, const char *name) {
  Dl_info di;
  struct link_map *l = NULL;
  if (!dladdr1(caller, &di, (void **)&l, RTLD_DL_LINKMAP) || !l)
    return dm_real_dlsym(RTLD_NEXT, name);
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
  Dl_info di;
  struct link_map *l = NULL;
  if (!dladdr1(caller, &di, (void **)&l, RTLD_DL_LINKMAP) || !l) return NULL;
  if (!l->l_name || !l->l_name[0]) return NULL;
  void *h = dlopen(l->l_name, RTLD_LAZY | RTLD_NOLOAD);
  if (!h) return NULL;
  p = dm_real_dlsym(h, name);
  dlclose(h);
  return p;
}

DM_EXPORT void *dlsym(void *handle, const char *name) {
  const void *caller = __builtin_return_address(0);
  void *p;
  if (handle == RTLD_NEXT) p = next_after(caller, name);
  else if (handle == RTLD_DEFAULT) p = default_for(caller, name);
  else p = dm_real_dlsym(handle, name);
  if (!p || name[0] != 'c' || name[1] != 'u') return p;
  int id = dm_hook_by_sym(name);
  if (id < 0 || dm_hook_by_ptr(p) >= 0) return p;
  dm_real_offer((dm_hook_id_t)id, p);
  if (dm_options()->disable) return p;
  return dm_hooks[id].hook;
}
