/*
 * driver.c — find libcuda and resolve the driver functions the shim needs:
 * the real entry points behind hooks (hooks.c asks dm_driver_sym), the
 * internal table dm_drv (driver.def); then the shim's other parts are
 * connected to the driver (parts.c).
 *
 * The shim never links libcuda: a process without CUDA never loads it because
 * of us. libcuda is opened (RTLD_NOLOAD first) only when a hook runs, i.e.
 * when the application already uses the driver.
 *
 * Locking: dm_driver_init() runs once (pthread_once); the tables are written
 * only there.
 */
#include "shim.h"

#include <dlfcn.h>
#include <pthread.h>
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
static void *g_handle;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

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

static void init_driver(void) {
  dm_fork_register();
  g_handle = open_driver();
  if (!g_handle) {
    dm_log(DM_LOG_INFO, "libcuda not found: the shim stays inert");
    return;
  }
  void *p;
#define DM_DRV(sym, params) \
  if ((p = dm_real_dlsym(g_handle, #sym))) dm_drv.sym = (CUresult(*) params)p;
#include "driver.def"
#undef DM_DRV
  dm_parts_connect(g_handle);
}

static int g_used;
int dm_driver_used(void) { return __atomic_load_n(&g_used, __ATOMIC_ACQUIRE); }

int dm_driver_init(void) {
  __atomic_store_n(&g_used, 1, __ATOMIC_RELEASE);
  pthread_once(&g_once, init_driver);
  return g_handle ? 0 : -1;
}

void *dm_driver_sym(const char *sym) {
  if (dm_driver_init()) return NULL;
  return dm_real_dlsym(g_handle, sym);
}

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
