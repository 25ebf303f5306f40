/*
 * jit_link.c — Driver API JIT link of PTX inputs. See jit_link.h.
 * Locking: pthread_once for the entry-point table and for the driver's
 * version line; nothing else shared.
 */
#include "jit_link.h"
#include "image/relink_err.h"
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef CUresult (*link_create_fn)(unsigned, CUjit_option *, void **, CUlinkState *);
typedef CUresult (*link_add_data_fn)(CUlinkState, CUjitInputType, void *, size_t, const char *, unsigned,
                                     CUjit_option *, void **);
typedef CUresult (*link_add_file_fn)(CUlinkState, CUjitInputType, const char *, unsigned, CUjit_option *,
                                     void **);
typedef CUresult (*link_complete_fn)(CUlinkState, void **, size_t *);
typedef CUresult (*link_destroy_fn)(CUlinkState);
typedef CUresult (*ctx_get_device_fn)(CUdevice *);
typedef CUresult (*dev_get_attr_fn)(int *, CUdevice_attribute, CUdevice);
typedef CUresult (*driver_version_fn)(int *);
typedef CUresult (*get_error_name_fn)(CUresult, const char **);
typedef CUresult (*ctx_get_current_fn)(CUcontext *);
typedef CUresult (*device_get_fn)(CUdevice *, int);
typedef CUresult (*primary_retain_fn)(CUcontext *, CUdevice);
typedef CUresult (*primary_release_fn)(CUdevice);
typedef CUresult (*ctx_push_fn)(CUcontext);
typedef CUresult (*ctx_pop_fn)(CUcontext *);

static struct {
  link_create_fn link_create;
  link_add_data_fn link_add_data;
  link_add_file_fn link_add_file;
  link_complete_fn link_complete;
  link_destroy_fn link_destroy;
  ctx_get_device_fn ctx_get_device;
  dev_get_attr_fn dev_get_attr;
  driver_version_fn driver_version;
  get_error_name_fn get_error_name;
  ctx_get_current_fn ctx_get_current;
  device_get_fn device_get;
  primary_retain_fn primary_retain;
  primary_release_fn primary_release;
  ctx_push_fn ctx_push;
  ctx_pop_fn ctx_pop;
} drv;

static pthread_once_t drv_once = PTHREAD_ONCE_INIT;
static dm_driver_resolver_fn resolver;

void dm_jit_set_resolver(dm_driver_resolver_fn fn) { resolver = fn; }

static void *default_resolve(const char *sym) {
  static void *h;
  if (!h) h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!h) h = dlopen("libcuda.so.1", RTLD_NOW);
  return h ? dlsym(h, sym) : NULL;
}

static void drv_init(void) {
  dm_driver_resolver_fn r = resolver ? resolver : default_resolve;
  drv.link_create = (link_create_fn)r("cuLinkCreate_v2");
  drv.link_add_data = (link_add_data_fn)r("cuLinkAddData_v2");
  drv.link_add_file = (link_add_file_fn)r("cuLinkAddFile_v2");
  drv.link_complete = (link_complete_fn)r("cuLinkComplete");
  drv.link_destroy = (link_destroy_fn)r("cuLinkDestroy");
  drv.ctx_get_device = (ctx_get_device_fn)r("cuCtxGetDevice");
  drv.dev_get_attr = (dev_get_attr_fn)r("cuDeviceGetAttribute");
  drv.driver_version = (driver_version_fn)r("cuDriverGetVersion");
  drv.get_error_name = (get_error_name_fn)r("cuGetErrorName");
  drv.ctx_get_current = (ctx_get_current_fn)r("cuCtxGetCurrent");
  drv.device_get = (device_get_fn)r("cuDeviceGet");
  drv.primary_retain = (primary_retain_fn)r("cuDevicePrimaryCtxRetain");
  drv.primary_release = (primary_release_fn)r("cuDevicePrimaryCtxRelease_v2");
  drv.ctx_push = (ctx_push_fn)r("cuCtxPushCurrent_v2");
  drv.ctx_pop = (ctx_pop_fn)r("cuCtxPopCurrent_v2");
}

/* A context for a JIT link: with one current, nothing; with none (a runtime
 * loading its libraries before creating a context), device 0's primary
 * context is retained (for good: the runtime uses it next) and pushed.
 * Returns 1 when it pushed one, for ctx_leave() to pop. */
static int ctx_enter(void) {
  pthread_once(&drv_once, drv_init);
  CUcontext cur = NULL;
  CUdevice dev;
  if (!drv.ctx_get_current || !drv.device_get || !drv.primary_retain || !drv.primary_release ||
      !drv.ctx_push || !drv.ctx_pop)
    return 0;
  if (drv.ctx_get_current(&cur) != CUDA_SUCCESS || cur) return 0;
  if (drv.device_get(&dev, 0) != CUDA_SUCCESS || drv.primary_retain(&cur, dev) != CUDA_SUCCESS) return 0;
  if (drv.ctx_push(cur) != CUDA_SUCCESS) {
    drv.primary_release(dev);
    return 0;
  }
  return 1;
}

/* The primary context stays retained: the runtime that loads a library
 * before any context is about to use it, and releasing it here destroyed it
 * in between (the shim's context table and host pool then forgot it). */
static void ctx_leave(int pushed) {
  CUcontext c;
  if (pushed) drv.ctx_pop(&c);
}

static int drv_ready(char *why, size_t whylen) {
  pthread_once(&drv_once, drv_init);
  if (!drv.link_create || !drv.link_add_data || !drv.link_complete || !drv.link_destroy ||
      !drv.ctx_get_device || !drv.dev_get_attr || !drv.driver_version)
    return dm_fail(-EIO, why, whylen, "CUDA driver entry points not found");
  return 0;
}

static const char *err_name(CUresult r) {
  const char *s = NULL;
  if (drv.get_error_name) drv.get_error_name(r, &s);
  return s ? s : "CUDA error";
}

/* The kernel module's version line, if readable: read once per process (it
 * cannot change under a running driver; every load's target used to open
 * /proc for it). */
static char driver_id[sizeof((dm_jit_target_t *)0)->driver_id];
static pthread_once_t driver_id_once = PTHREAD_ONCE_INIT;

static void read_driver_id(void) {
  FILE *f = fopen("/proc/driver/nvidia/version", "re");
  if (!f) return;
  if (fgets(driver_id, (int)sizeof driver_id, f)) driver_id[strcspn(driver_id, "\n")] = 0;
  fclose(f);
}

/* t for device dev; the driver's entry points are resolved already. */
static int query_target(int dev, dm_jit_target_t *t, char *why, size_t whylen) {
  CUresult r;
  if ((r = drv.dev_get_attr(&t->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)) ||
      (r = drv.dev_get_attr(&t->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev)) ||
      (r = drv.driver_version(&t->driver_version)))
    return dm_fail(-EIO, why, whylen, "device query failed (%s)", err_name(r));
  pthread_once(&driver_id_once, read_driver_id);
  memcpy(t->driver_id, driver_id, sizeof t->driver_id);
  return 0;
}

int dm_jit_target_of(int dev, dm_jit_target_t *t, char *why, size_t whylen) {
  memset(t, 0, sizeof *t);
  int rc = drv_ready(why, whylen);
  return rc < 0 ? rc : query_target(dev, t, why, whylen);
}

int dm_jit_target(dm_jit_target_t *t, char *why, size_t whylen) {
  memset(t, 0, sizeof *t);
  int rc = drv_ready(why, whylen);
  if (rc < 0) return rc;
  CUdevice dev;
  CUresult r = drv.ctx_get_device(&dev);
  CUcontext cur = NULL;
  /* no context yet (a runtime loading its libraries first): device 0, the
     * one whose primary context a link would run in (ctx_enter) */
  if (r != CUDA_SUCCESS && drv.ctx_get_current && drv.device_get &&
      drv.ctx_get_current(&cur) == CUDA_SUCCESS && !cur && drv.device_get(&dev, 0) == CUDA_SUCCESS)
    r = CUDA_SUCCESS;
  if (r != CUDA_SUCCESS) return dm_fail(-EIO, why, whylen, "no current context (%s)", err_name(r));
  return query_target(dev, t, why, whylen);
}

/* First line of the JIT error log, for the one-line reason. */
static const char *first_line(char *log) {
  log[strcspn(log, "\n")] = 0;
  return log[0] ? log : "no log";
}

static CUresult add_input(CUlinkState ls, const dm_jit_input_t *in, unsigned nopt, CUjit_option *opt,
                          void **val) {
  switch (in->kind) {
  case DM_JIT_IN_CUBIN:
    return drv.link_add_data(ls, CU_JIT_INPUT_CUBIN, (void *)in->ptx, in->size, in->name, nopt, opt, val);
  case DM_JIT_IN_LIBRARY:
    if (!drv.link_add_file) return CUDA_ERROR_NOT_FOUND;
    return drv.link_add_file(ls, CU_JIT_INPUT_LIBRARY, in->ptx, nopt, opt, val);
  default:
    return drv.link_add_data(ls, CU_JIT_INPUT_PTX, (void *)in->ptx, in->size + 1, in->name, nopt, opt, val);
  }
}

int dm_jit_link(const dm_jit_input_t *in, int n, void **cubin, size_t *cubin_size, char *why, size_t whylen) {
  int rc = drv_ready(why, whylen);
  if (rc < 0) return rc;
  char errlog[2048] = "";
  CUjit_option opt[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *val[] = {errlog, (void *)(uintptr_t)sizeof errlog};
  CUlinkState ls;
  int pushed = ctx_enter(); /* only a link needs a context */
  CUresult r = drv.link_create(2, opt, val, &ls);
  if (r != CUDA_SUCCESS) {
    ctx_leave(pushed);
    return dm_fail(-EIO, why, whylen, "cuLinkCreate: %s", err_name(r));
  }
  for (int i = 0; i < n && r == CUDA_SUCCESS; i++) {
    CUjit_option cap_opt[] = {CU_JIT_MAX_REGISTERS};
    void *cap_val[] = {(void *)(uintptr_t)in[i].max_registers};
    unsigned ncap = in[i].max_registers ? 1u : 0u;
    r = add_input(ls, &in[i], ncap, ncap ? cap_opt : NULL, ncap ? cap_val : NULL);
    if (r != CUDA_SUCCESS)
      rc = dm_fail(-EIO, why, whylen, "%s(%s): %s: %s",
                   in[i].kind == DM_JIT_IN_LIBRARY ? "cuLinkAddFile" : "cuLinkAddData", in[i].name,
                   err_name(r), first_line(errlog));
  }
  void *img = NULL;
  size_t sz = 0;
  if (r == CUDA_SUCCESS) {
    r = drv.link_complete(ls, &img, &sz);
    if (r != CUDA_SUCCESS)
      rc = dm_fail(-EIO, why, whylen, "cuLinkComplete: %s: %s", err_name(r), first_line(errlog));
  }
  if (r == CUDA_SUCCESS) {
    /* The image belongs to the link state: copy it before destroying. */
    void *copy = malloc(sz ? sz : 1);
    if (!copy) {
      rc = dm_fail(-ENOMEM, why, whylen, "out of memory");
    } else {
      memcpy(copy, img, sz);
      *cubin = copy;
      *cubin_size = sz;
    }
  }
  drv.link_destroy(ls);
  ctx_leave(pushed);
  return rc;
}
