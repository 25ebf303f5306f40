/*
 * driver.c — libcuda: find it and resolve the driver functions the shim
 * itself calls, the internal table dm_drv (driver.def), plus small helpers
 * over them (error strings, the context of a stream, export names).
 *
 * The shim never links libcuda: a process without CUDA never loads it because
 * of us. libcuda is opened (RTLD_NOLOAD first) only when a hook runs, i.e.
 * when the application already uses the driver: real.c calls dm_driver_open
 * once, at the driver's first use, and wires the rest of the shim to it.
 *
 * May call: real_dlsym.c, options/ (the log). Nothing else of the shim: every
 * other file may call this one.
 *
 * Locking: dm_driver_open runs once (inside real.c's pthread_once); the
 * table is written only there. The "used" flag is an atomic.
 */
#include "shim.h"

#include <dlfcn.h>
#include <stdio.h>

/* Typed stubs for entries the driver lacks. */
#define DM_DRV(sym, params) \
  static CUresult dm_stub_##sym params { return CUDA_ERROR_NOT_FOUND; }
#include "driver.def"
#undef DM_DRV

dm_drv_t dm_drv = {
#define DM_DRV(sym, params) .sym = dm_stub_##sym,
#include "driver.def"
#undef DM_DRV
};

static const char *g_lib_path;

void dm_driver_set_library(const char *path) { g_lib_path = path; }

static void *open_driver(void) {
  static const char *const names[] = {"libcuda.so.1", "libcuda.so", NULL};
  void *h;
  if (g_lib_path) {
    h = dlopen(g_lib_path, RTLD_LAZY | RTLD_NOLOAD);
    return h ? h : dlopen(g_lib_path, RTLD_LAZY);
  }
  for (int i = 0; names[i]; i++)
    if ((h = dlopen(names[i], RTLD_LAZY | RTLD_NOLOAD))) return h;
  return dlopen(names[0], RTLD_LAZY);
}

void *dm_driver_open(void) {
  void *h = open_driver();
  if (!h) {
    dm_log(DM_LOG_INFO, "libcuda not found: the shim stays inert");
    return NULL;
  }
  void *p;
#define DM_DRV(sym, params) \
  if ((p = dm_real_dlsym(h, #sym))) dm_drv.sym = (CUresult(*) params)p;
#include "driver.def"
#undef DM_DRV
  return h;
}

static int g_used;
int dm_driver_used(void) { return __atomic_load_n(&g_used, __ATOMIC_ACQUIRE); }
void dm_driver_mark_used(void) { __atomic_store_n(&g_used, 1, __ATOMIC_RELEASE); }

const char *dm_driver_export_name(const void *addr) {
  Dl_info di;
  if (!dladdr(addr, &di) || di.dli_saddr != addr) return NULL;
  return di.dli_sname;
}

const char *dm_cu_err(CUresult r) {
  static __thread char buf[48];
  const char *s = NULL;
  if (dm_drv.cuGetErrorString(r, &s) == CUDA_SUCCESS && s) return s;
  snprintf(buf, sizeof buf, "CUresult %d", (int)r);
  return buf;
}

CUcontext dm_stream_ctx(CUstream s) {
  CUcontext c = NULL;
  if (s && s != CU_STREAM_LEGACY && s != CU_STREAM_PER_THREAD &&
      dm_drv.cuStreamGetCtx(s, &c) == CUDA_SUCCESS && c)
    return c;
  if (dm_drv.cuCtxGetCurrent(&c) != CUDA_SUCCESS) return NULL;
  return c;
}
