/*
 * fake_jit.h — the fake driver the re-link code gets through
 * dm_jit_set_resolver() in host tests and fuzz targets: a device of compute
 * capability fake_cc_major.fake_cc_minor, driver 13.0, and the JIT linker
 * functions the includer defines before this header (f_link_create,
 * f_link_add, f_link_complete, f_link_destroy). fake_no_ctx: no context is
 * current (cuCtxGetCurrent gives NULL, cuCtxGetDevice fails) until one is
 * pushed; fake_no_primary: the primary context cannot be had either.
 * fake_pushes / fake_pops / fake_releases count the calls.
 */
#ifndef DM_FAKE_JIT_H
#define DM_FAKE_JIT_H
#include <cuda.h>
#include <string.h>

static int fake_cc_major = 9, fake_cc_minor = 0, fake_no_ctx, fake_no_primary;
static int fake_pushes, fake_pops, fake_releases;

static int fake_has_ctx(void) { return !fake_no_ctx || fake_pushes > fake_pops; }
static CUresult f_ctx_get_device(CUdevice *d) {
  *d = 0;
  return fake_has_ctx() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}
static CUresult f_ctx_get_current(CUcontext *c) {
  *c = fake_has_ctx() ? (CUcontext)0xC0 : NULL;
  return CUDA_SUCCESS;
}
static CUresult f_device_get(CUdevice *d, int i) {
  *d = i;
  return CUDA_SUCCESS;
}
static CUresult f_primary_retain(CUcontext *c, CUdevice d) {
  (void)d;
  *c = (CUcontext)0xD0;
  return fake_no_primary ? CUDA_ERROR_NO_DEVICE : CUDA_SUCCESS;
}
static CUresult f_primary_release(CUdevice d) {
  (void)d;
  fake_releases++;
  return CUDA_SUCCESS;
}
static CUresult f_ctx_push(CUcontext c) {
  (void)c;
  fake_pushes++;
  return CUDA_SUCCESS;
}
static CUresult f_ctx_pop(CUcontext *c) {
  *c = (CUcontext)0xD0;
  fake_pops++;
  return CUDA_SUCCESS;
}
static CUresult f_attr(int *v, CUdevice_attribute a, CUdevice d) {
  (void)d;
  *v = a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? fake_cc_major : fake_cc_minor;
  return CUDA_SUCCESS;
}
static CUresult f_driver_version(int *v) {
  *v = 13000;
  return CUDA_SUCCESS;
}

static void *fake_resolve(const char *sym) {
  static const struct {
    const char *n;
    void *f;
  } t[] = {
      {"cuLinkCreate_v2", (void *)f_link_create},
      {"cuLinkAddData_v2", (void *)f_link_add},
      {"cuLinkComplete", (void *)f_link_complete},
      {"cuLinkDestroy", (void *)f_link_destroy},
      {"cuCtxGetDevice", (void *)f_ctx_get_device},
      {"cuDeviceGetAttribute", (void *)f_attr},
      {"cuDriverGetVersion", (void *)f_driver_version},
      {"cuCtxGetCurrent", (void *)f_ctx_get_current},
      {"cuDeviceGet", (void *)f_device_get},
      {"cuDevicePrimaryCtxRetain", (void *)f_primary_retain},
      {"cuDevicePrimaryCtxRelease_v2", (void *)f_primary_release},
      {"cuCtxPushCurrent_v2", (void *)f_ctx_push},
      {"cuCtxPopCurrent_v2", (void *)f_ctx_pop},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    if (!strcmp(t[i].n, sym)) return t[i].f;
  return NULL;
}

#endif
