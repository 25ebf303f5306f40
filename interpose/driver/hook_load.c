/*
 * hook_load.c — module and library load/unload hooks.
 *
 * Load: unless DEVMALLOC_JIT=off or the image already holds devmalloc, ask
 * relink.h for a re-linked image and load that instead (the original if the
 * re-linked one fails to load); then record the module/library (owners.c)
 * with what the image scan says (image_bound.c delimits the unsized image,
 * image_scan.c reads inside it; malformed images go to the driver as they
 * are). When the current context
 * already has a heap, a module holding devmalloc is bound right away;
 * otherwise the first launch binds it (the heap is created then, so that
 * cuCtxSetLimit before the first launch still decides its size).
 *
 * A module that calls the stock device malloc and could not be re-linked
 * (SASS only, PTX too new for the device, a failed link) keeps CUDA's stock
 * allocator: the first such module of the process is reported as a warning,
 * whatever DEVMALLOC_VERBOSE says, with the reason; later ones at verbose 1.
 *
 * Unload: forget the record and every launch-cache entry it owns (the driver
 * may reuse the handles).
 *
 * May call: bind.c, ctxtab.c, owners.c, trace.c, real.c, driver.c, state.c,
 * the parts' tables (dm_relink_ops), image/, observe/, options/.
 *
 * Locking: owner lock around record updates; relink/load run unlocked; the
 * "warned once" flag is an atomic exchange.
 */
#include "shim.h"
#include "obs.h"

#include <stdio.h>
#include <string.h>

static CUcontext current_ctx(void) {
  CUcontext c = NULL;
  return dm_drv.cuCtxGetCurrent(&c) == CUDA_SUCCESS ? c : NULL;
}

/* Start of a re-link: nothing re-linked yet; 1 (with the reason in why)
 * when DEVMALLOC_JIT=off. */
static int jit_off(const void **relinked, char *why, size_t whylen) {
  *relinked = NULL;
  why[0] = 0;
  if (dm_options()->jit != DM_JIT_OFF) return 0;
  snprintf(why, whylen, "DEVMALLOC_JIT=off");
  return 1;
}

/* Run the re-link of the file `path`, or else of the in-memory `image`
 * (`body`, `len`), as the shim's own driver work; the re-linked image, or
 * NULL. */
static const void *run_relink(const void *image, const void *body, size_t len, const char *path,
                              const void **relinked, char *why, size_t whylen) {
  const void *out = NULL;
  size_t sz = 0;
  int r;
  dm_tls_busy++;
  if (path) {
    dm_nvtx_push("devmalloc: load-time re-link of %s", path);
    r = dm_relink_ops->file(path, &out, &sz, why, whylen);
  } else {
    dm_nvtx_push("devmalloc: load-time re-link of image %p", image);
    r = dm_relink_ops->sized(image, body, len, &out, &sz, why, whylen);
  }
  dm_nvtx_pop();
  dm_tls_busy--;
  if (r == 1 && out) *relinked = out;
  return *relinked;
}

/* Try the re-link of an in-memory image; returns the image to load. `body`
 * and `len` are the image as image_bound.c delimited it (NULL: malformed or
 * unreadable, so the driver gets the original and gives its own error). */
static const void *maybe_relink(const void *image, const void *body, size_t len, dm_has_t has,
                                const void **relinked, char *why, size_t whylen) {
  if (jit_off(relinked, why, whylen) || has == DM_HAS_YES) return image;
  if (!body) {
    snprintf(why, whylen, "image malformed, unreadable or of unknown format");
    return image;
  }
  const void *out = run_relink(image, body, len, NULL, relinked, why, whylen);
  return out ? out : image;
}

static const void *maybe_relink_file(const char *path, const void **relinked, char *why, size_t whylen) {
  if (jit_off(relinked, why, whylen)) return NULL;
  return run_relink(NULL, NULL, 0, path, relinked, why, whylen);
}

/* The re-link's reason for not re-linking says the module calls the stock
 * allocator (every such reason of relink.c is about its PTX: none, too new,
 * or failing to link), as opposed to: it never calls malloc, holds devmalloc,
 * or could not be read (then nothing is known, and nothing is claimed). */
static int keeps_stock(const char *why) {
  return why && strstr(why, "PTX") && !strstr(why, "does not call device malloc") &&
         !strstr(why, "already linked with devmalloc");
}

static int g_stock_warned;

/* took: how long the re-link and the driver's load took (ms), for the
 * verbose line of a module that holds devmalloc. */
static void record(dm_owner_kind_t kind, const void *handle, dm_has_t has, const char *how, const char *name,
                   int relinked, const char *why, const double took[2]) {
  CUcontext ctx = current_ctx();
  char label[96];
  snprintf(label, sizeof label, "%s%s%s", how, name ? " " : "", name ? name : "");
  if (has != DM_HAS_NO) dm_candidates_set();
  if (relinked) dm_obs_relinked(); /* the re-linked image is what loaded */
  dm_owner_lock();
  dm_owner_t *o = dm_owner_get(kind, handle, 1);
  if (o) {
    dm_owner_set_loaded(o, label);
    dm_owner_set_has(o, has);
    if (kind == DM_OWNER_MODULE) dm_owner_set_ctx(o, ctx);
  }
  dm_owner_unlock();
  const char *k = kind == DM_OWNER_LIBRARY ? "library" : "module";
  if (has == DM_HAS_YES)
    dm_log(DM_LOG_INFO, "%s %p (%s): holds devmalloc (%sload %.2f ms, the driver's %.2f ms)", k, handle,
           label, relinked ? "re-linked at " : "", took[0] + took[1], took[1]);
  else if (keeps_stock(why) && !__atomic_exchange_n(&g_stock_warned, 1, __ATOMIC_ACQ_REL))
    dm_log(DM_LOG_WARN,
           "warning: %s %p (%s) runs on CUDA's stock device malloc, not "
           "devmalloc: it cannot be re-linked (%s); build it for sm_80 or newer with PTX "
           "(-arch=sm_XX) or link devmalloc in (-rdc=true); further such modules are "
           "listed at DEVMALLOC_VERBOSE=1",
           k, handle, label, why);
  else if (keeps_stock(why))
    dm_log(DM_LOG_INFO, "%s %p (%s): runs on the stock device malloc; not re-linked: %s", k, handle, label,
           why);
  else if (has == DM_HAS_NO)
    dm_log(DM_LOG_INFO, "%s %p (%s): not bound: no devmalloc in the image%s%s", k, handle, label,
           why && why[0] ? "; not re-linked: " : "", why ? why : "");
  else
    dm_log(DM_LOG_DEBUG, "%s %p (%s): devmalloc unknown until first launch%s%s", k, handle, label,
           why && why[0] ? "; not re-linked: " : "", why ? why : "");
  if (has == DM_HAS_YES && ctx && dm_ctx_heap_peek(ctx)) dm_prepare_owner(kind, handle, ctx);
}

/* One in-memory load through the driver: `load` calls the real entry point
 * (with the caller's other arguments) on the image it is given. */
typedef struct loader {
  CUresult (*load)(struct loader *l, const void *image);
} loader_t;

/* Load `image` re-linked when that applies, the original when not or when
 * the re-linked one fails to load; then record the new module/library. */
static CUresult load_image(loader_t *l, const void *image, dm_owner_kind_t kind, void *const *handle,
                           const char *api) {
  char why[256];
  const void *rl;
  size_t len;
  double t0 = dm_clock_ms(), took[2];
  const void *body = dm_image_bound(image, &len);
  dm_has_t has = body ? dm_image_scan(body, len) : DM_HAS_UNKNOWN;
  const void *use = maybe_relink(image, body, len, has, &rl, why, sizeof why);
  double t1 = dm_clock_ms();
  CUresult r = l->load(l, use);
  if (rl && r != CUDA_SUCCESS) {
    dm_log(DM_LOG_WARN, "warning: re-linked image failed to load (%s); loading the original", dm_cu_err(r));
    use = image;
    r = l->load(l, image);
  }
  if (rl) dm_relink_ops->release(rl);
  took[0] = t1 - t0;
  took[1] = dm_clock_ms() - t1;
  if (r == CUDA_SUCCESS)
    record(kind, *handle, use != image ? DM_HAS_YES : has, api, NULL, use != image, why, took);
  return r;
}

/* Load a module/library file: re-linked through `image` (the in-memory entry
 * point; NULL when the driver lacks it) when that applies, else (or when the
 * re-linked image fails to load) the file itself through `file`. */
static CUresult load_file(loader_t *image, loader_t *file, const char *fname, dm_owner_kind_t kind,
                          void *const *handle, const char *api) {
  char why[256];
  const void *rl;
  CUresult r = CUDA_ERROR_UNKNOWN;
  int used = 0;
  double t0 = dm_clock_ms(), took[2];
  int relinked = fname && maybe_relink_file(fname, &rl, why, sizeof why);
  double t1 = dm_clock_ms();
  if (relinked) {
    r = image ? image->load(image, rl) : CUDA_ERROR_NOT_INITIALIZED;
    used = r == CUDA_SUCCESS;
    if (!used)
      dm_log(DM_LOG_WARN, "warning: re-linked %s failed to load (%s); loading the original", fname,
             dm_cu_err(r));
    dm_relink_ops->release(rl);
  }
  if (!used) r = file->load(file, NULL);
  took[0] = t1 - t0;
  took[1] = dm_clock_ms() - t1;
  if (r == CUDA_SUCCESS) {
    const char *base = fname ? strrchr(fname, '/') : NULL;
    record(kind, *handle, used ? DM_HAS_YES : DM_HAS_UNKNOWN, api, base ? base + 1 : fname, used, why, took);
  }
  return r;
}

/* --- modules ------------------------------------------------------------- */

typedef struct {
  loader_t base;
  dm_pfn_cuModuleLoadData real;
  CUmodule *module;
} load_data_t;
static CUresult load_data(loader_t *l, const void *image) {
  load_data_t *a = (load_data_t *)l;
  return a->real(a->module, image);
}

CUresult dm_h_module_load_data(dm_pfn_cuModuleLoadData real, CUmodule *module, const void *image) {
  load_data_t a = {{load_data}, real, module};
  return load_image(&a.base, image, DM_OWNER_MODULE, (void *const *)module, "cuModuleLoadData");
}

typedef struct {
  loader_t base;
  dm_pfn_cuModuleLoadDataEx real;
  CUmodule *module;
  unsigned int n;
  CUjit_option *opts;
  void **vals;
} load_data_ex_t;
static CUresult load_data_ex(loader_t *l, const void *image) {
  load_data_ex_t *a = (load_data_ex_t *)l;
  return a->real(a->module, image, a->n, a->opts, a->vals);
}

CUresult dm_h_module_load_data_ex(dm_pfn_cuModuleLoadDataEx real, CUmodule *module, const void *image,
                                  unsigned int n, CUjit_option *opts, void **vals) {
  load_data_ex_t a = {{load_data_ex}, real, module, n, opts, vals};
  return load_image(&a.base, image, DM_OWNER_MODULE, (void *const *)module, "cuModuleLoadDataEx");
}

CUresult dm_h_module_load_fatbin(dm_pfn_cuModuleLoadFatBinary real, CUmodule *module, const void *fatbin) {
  load_data_t a = {{load_data}, real, module}; /* the same signature */
  return load_image(&a.base, fatbin, DM_OWNER_MODULE, (void *const *)module, "cuModuleLoadFatBinary");
}

typedef struct {
  loader_t base;
  dm_pfn_cuModuleLoad real;
  CUmodule *module;
  const char *fname;
} load_module_file_t;
static CUresult load_module_file(loader_t *l, const void *unused) {
  load_module_file_t *a = (load_module_file_t *)l;
  return a->real(a->module, a->fname);
}

CUresult dm_h_module_load(dm_pfn_cuModuleLoad real, CUmodule *module, const char *fname) {
  load_module_file_t f = {{load_module_file}, real, module, fname};
  load_data_t i = {{load_data}, (dm_pfn_cuModuleLoadData)dm_real(DM_ID_cuModuleLoadData), module};
  return load_file(i.real ? &i.base : NULL, &f.base, fname, DM_OWNER_MODULE, (void *const *)module,
                   "cuModuleLoad");
}

CUresult dm_h_module_unload(dm_pfn_cuModuleUnload real, CUmodule hmod) {
  dm_owner_unloaded(hmod);
  return real(hmod);
}

/* --- libraries ------------------------------------------------------------- */

/* The options both library loaders pass on unchanged. */
typedef struct {
  CUjit_option *jo;
  void **jv;
  unsigned int nj;
  CUlibraryOption *lo;
  void **lv;
  unsigned int nl;
} library_opts_t;

typedef struct {
  loader_t base;
  dm_pfn_cuLibraryLoadData real;
  CUlibrary *library;
  library_opts_t o;
} load_library_t;
static CUresult load_library(loader_t *l, const void *image) {
  load_library_t *a = (load_library_t *)l;
  return a->real(a->library, image, a->o.jo, a->o.jv, a->o.nj, a->o.lo, a->o.lv, a->o.nl);
}

CUresult dm_h_library_load_data(dm_pfn_cuLibraryLoadData real, CUlibrary *library, const void *code,
                                CUjit_option *jo, void **jv, unsigned int nj, CUlibraryOption *lo, void **lv,
                                unsigned int nl) {
  load_library_t a = {{load_library}, real, library, {jo, jv, nj, lo, lv, nl}};
  return load_image(&a.base, code, DM_OWNER_LIBRARY, (void *const *)library, "cuLibraryLoadData");
}

typedef struct {
  loader_t base;
  dm_pfn_cuLibraryLoadFromFile real;
  CUlibrary *library;
  const char *fname;
  library_opts_t o;
} load_library_file_t;
static CUresult load_library_file(loader_t *l, const void *unused) {
  load_library_file_t *a = (load_library_file_t *)l;
  (void)unused;
  return a->real(a->library, a->fname, a->o.jo, a->o.jv, a->o.nj, a->o.lo, a->o.lv, a->o.nl);
}

CUresult dm_h_library_load_file(dm_pfn_cuLibraryLoadFromFile real, CUlibrary *library, const char *fname,
                                CUjit_option *jo, void **jv, unsigned int nj, CUlibraryOption *lo, void **lv,
                                unsigned int nl) {
  library_opts_t o = {jo, jv, nj, lo, lv, nl};
  load_library_file_t f = {{load_library_file}, real, library, fname, o};
  load_library_t i = {{load_library}, (dm_pfn_cuLibraryLoadData)dm_real(DM_ID_cuLibraryLoadData), library, o};
  return load_file(i.real ? &i.base : NULL, &f.base, fname, DM_OWNER_LIBRARY, (void *const *)library,
                   "cuLibraryLoadFromFile");
}

CUresult dm_h_library_unload(dm_pfn_cuLibraryUnload real, CUlibrary library) {
  dm_owner_unloaded(library);
  return real(library);
}
