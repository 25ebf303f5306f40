/*
 * hook_load.c — module and library load/unload hooks.
 *
 * Load: unless DEVMALLOC_JIT=off or the image already holds devmalloc, ask
 * relink.h for a re-linked image and load that instead (the original if the
 * re-linked one fails to load); then record the module/library (owners.c)
 * with what the image scan says (image_scan.c). When the current context
 * already has a heap, a module holding devmalloc is bound right away;
 * otherwise the first launch binds it (the heap is created then, so that
 * cuCtxSetLimit before the first launch still decides its size).
 *
 * Unload: forget the record and every launch-cache entry it owns (the driver
 * may reuse the handles).
 *
 * Locking: owner lock around record updates; relink/load run unlocked.
 */
#include "shim.h"
#include "relink.h"

#include <stdio.h>
#include <string.h>

static CUcontext current_ctx(void) {
  CUcontext c = NULL;
  return dm_drv.cuCtxGetCurrent(&c) == CUDA_SUCCESS ? c : NULL;
}

/* Try the re-link of an in-memory image; returns the image to load. */
static const void *maybe_relink(const void *image, dm_has_t has, const void **relinked,
                                char *why, size_t whylen) {
  *relinked = NULL;
  why[0] = 0;
  if (dm_options()->jit == DM_JIT_OFF) {
    snprintf(why, whylen, "DEVMALLOC_JIT=off");
    return image;
  }
  if (has == DM_HAS_YES) return image;
  const void *out = NULL;
  size_t sz = 0;
  dm_tls_busy++;
  int r = dm_relink_image(image, &out, &sz, why, whylen);
  dm_tls_busy--;
  if (r == 1 && out) {
    *relinked = out;
    return out;
  }
  return image;
}

static const void *maybe_relink_file(const char *path, const void **relinked, char *why,
                                     size_t whylen) {
  *relinked = NULL;
  why[0] = 0;
  if (dm_options()->jit == DM_JIT_OFF) {
    snprintf(why, whylen, "DEVMALLOC_JIT=off");
    return NULL;
  }
  const void *out = NULL;
  size_t sz = 0;
  dm_tls_busy++;
  int r = dm_relink_file(path, &out, &sz, why, whylen);
  dm_tls_busy--;
  if (r == 1 && out) *relinked = out;
  return *relinked;
}

static void record(dm_owner_kind_t kind, const void *handle, dm_has_t has,
                   const char *how, const char *name, int relinked, const char *why) {
  CUcontext ctx = current_ctx();
  char label[96];
  snprintf(label, sizeof label, "%s%s%s", how, name ? " " : "", name ? name : "");
  if (has != DM_HAS_NO) dm_candidates_set();
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
    dm_log(DM_LOG_INFO, "%s %p (%s): holds devmalloc%s", k, handle, label,
           relinked ? " (re-linked at load)" : "");
  else if (has == DM_HAS_NO)
    dm_log(DM_LOG_INFO, "%s %p (%s): not bound: no devmalloc in the image%s%s", k, handle,
           label, why && why[0] ? "; not re-linked: " : "", why ? why : "");
  else
    dm_log(DM_LOG_DEBUG, "%s %p (%s): devmalloc unknown until first launch%s%s", k, handle,
           label, why && why[0] ? "; not re-linked: " : "", why ? why : "");
  if (has == DM_HAS_YES && ctx && dm_ctx_heap_peek(ctx)) dm_prepare_owner(kind, handle, ctx);
}

static dm_has_t scan(const void *image, int relinked) {
  return relinked ? DM_HAS_YES : dm_image_has_devmalloc(image);
}

/* --- modules ------------------------------------------------------------- */

CUresult dm_h_module_load_data(dm_pfn_cuModuleLoadData real, CUmodule *module,
                               const void *image) {
  char why[256];
  const void *rl;
  dm_has_t has = dm_image_has_devmalloc(image);
  const void *use = maybe_relink(image, has, &rl, why, sizeof why);
  CUresult r = real(module, use);
  if (rl && r != CUDA_SUCCESS) {
    dm_log(DM_LOG_WARN, "warning: re-linked image failed to load (%s); loading the original",
           dm_cu_err(r));
    use = image;
    r = real(module, image);
  }
  if (rl) dm_relink_free(rl);
  if (r == CUDA_SUCCESS)
    record(DM_OWNER_MODULE, *module, scan(image, use != image), "cuModuleLoadData", NULL,
           use != image, why);
  return r;
}

CUresult dm_h_module_load_data_ex(dm_pfn_cuModuleLoadDataEx real, CUmodule *module,
                                  const void *image, unsigned int n, CUjit_option *opts,
                                  void **vals) {
  char why[256];
  const void *rl;
  dm_has_t has = dm_image_has_devmalloc(image);
  const void *use = maybe_relink(image, has, &rl, why, sizeof why);
  CUresult r = real(module, use, n, opts, vals);
  if (rl && r != CUDA_SUCCESS) {
    dm_log(DM_LOG_WARN, "warning: re-linked image failed to load (%s); loading the original",
           dm_cu_err(r));
    use = image;
    r = real(module, image, n, opts, vals);
  }
  if (rl) dm_relink_free(rl);
  if (r == CUDA_SUCCESS)
    record(DM_OWNER_MODULE, *module, scan(image, use != image), "cuModuleLoadDataEx", NULL,
           use != image, why);
  return r;
}

CUresult dm_h_module_load_fatbin(dm_pfn_cuModuleLoadFatBinary real, CUmodule *module,
                                 const void *fatbin) {
  char why[256];
  const void *rl;
  dm_has_t has = dm_image_has_devmalloc(fatbin);
  const void *use = maybe_relink(fatbin, has, &rl, why, sizeof why);
  CUresult r = real(module, use);
  if (rl && r != CUDA_SUCCESS) {
    dm_log(DM_LOG_WARN, "warning: re-linked image failed to load (%s); loading the original",
           dm_cu_err(r));
    use = fatbin;
    r = real(module, fatbin);
  }
  if (rl) dm_relink_free(rl);
  if (r == CUDA_SUCCESS)
    record(DM_OWNER_MODULE, *module, scan(fatbin, use != fatbin), "cuModuleLoadFatBinary",
           NULL, use != fatbin, why);
  return r;
}

CUresult dm_h_module_load(dm_pfn_cuModuleLoad real, CUmodule *module, const char *fname) {
  char why[256];
  const void *rl;
  CUresult r = CUDA_ERROR_UNKNOWN;
  int used = 0;
  if (fname && maybe_relink_file(fname, &rl, why, sizeof why)) {
    dm_pfn_cuModuleLoadData load = (dm_pfn_cuModuleLoadData)dm_real(DM_ID_cuModuleLoadData);
    r = load ? load(module, rl) : CUDA_ERROR_NOT_INITIALIZED;
    used = r == CUDA_SUCCESS;
    if (!used)
      dm_log(DM_LOG_WARN, "warning: re-linked %s failed to load (%s); loading the original",
             fname, dm_cu_err(r));
    dm_relink_free(rl);
  }
  if (!used) r = real(module, fname);
  if (r == CUDA_SUCCESS) {
    const char *base = fname ? strrchr(fname, '/') : NULL;
    record(DM_OWNER_MODULE, *module, used ? DM_HAS_YES : DM_HAS_UNKNOWN, "cuModuleLoad",
           base ? base + 1 : fname, used, why);
  }
  return r;
}

CUresult dm_h_module_unload(dm_pfn_cuModuleUnload real, CUmodule hmod) {
  dm_owner_lock();
  dm_owner_remove(hmod);
  dm_owner_forget_derived();
  dm_owner_unlock();
  return real(hmod);
}

/* --- libraries ------------------------------------------------------------- */

CUresult dm_h_library_load_data(dm_pfn_cuLibraryLoadData real, CUlibrary *library,
                                const void *code, CUjit_option *jo, void **jv,
                                unsigned int nj, CUlibraryOption *lo, void **lv,
                                unsigned int nl) {
  char why[256];
  const void *rl;
  dm_has_t has = dm_image_has_devmalloc(code);
  const void *use = maybe_relink(code, has, &rl, why, sizeof why);
  CUresult r = real(library, use, jo, jv, nj, lo, lv, nl);
  if (rl && r != CUDA_SUCCESS) {
    dm_log(DM_LOG_WARN, "warning: re-linked image failed to load (%s); loading the original",
           dm_cu_err(r));
    use = code;
    r = real(library, code, jo, jv, nj, lo, lv, nl);
  }
  if (rl) dm_relink_free(rl);
  if (r == CUDA_SUCCESS)
    record(DM_OWNER_LIBRARY, *library, scan(code, use != code), "cuLibraryLoadData", NULL,
           use != code, why);
  return r;
}

CUresult dm_h_library_load_file(dm_pfn_cuLibraryLoadFromFile real, CUlibrary *library,
                                const char *fname, CUjit_option *jo, void **jv,
                                unsigned int nj, CUlibraryOption *lo, void **lv,
                                unsigned int nl) {
  char why[256];
  const void *rl;
  CUresult r = CUDA_ERROR_UNKNOWN;
  int used = 0;
  if (fname && maybe_relink_file(fname, &rl, why, sizeof why)) {
    dm_pfn_cuLibraryLoadData load = (dm_pfn_cuLibraryLoadData)dm_real(DM_ID_cuLibraryLoadData);
    r = load ? load(library, rl, jo, jv, nj, lo, lv, nl) : CUDA_ERROR_NOT_INITIALIZED;
    used = r == CUDA_SUCCESS;
    if (!used)
      dm_log(DM_LOG_WARN, "warning: re-linked %s failed to load (%s); loading the original",
             fname, dm_cu_err(r));
    dm_relink_free(rl);
  }
  if (!used) r = real(library, fname, jo, jv, nj, lo, lv, nl);
  if (r == CUDA_SUCCESS) {
    const char *base = fname ? strrchr(fname, '/') : NULL;
    record(DM_OWNER_LIBRARY, *library, used ? DM_HAS_YES : DM_HAS_UNKNOWN,
           "cuLibraryLoadFromFile", base ? base + 1 : fname, used, why);
  }
  return r;
}

CUresult dm_h_library_unload(dm_pfn_cuLibraryUnload real, CUlibrary library) {
  dm_owner_lock();
  dm_owner_remove(library);
  dm_owner_forget_derived();
  dm_owner_unlock();
  return real(library);
}
