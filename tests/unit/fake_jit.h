/*
 * fake_jit.h — the fake driver the re-link code gets through
 * dm_jit_set_resolver() in host tests and fuzz targets: a device of compute
 * capability fake_cc_major.fake_cc_minor, driver 13.0, and the JIT linker
 * functions the includer defines before this header (f_link_create,
 * f_link_add, f_link_complete, f_link_destroy). fake_no_ctx makes
 * cuCtxGetDevice fail as without a current context.
 */
#ifndef DM_FAKE_JIT_H
#define DM_FAKE_JIT_H
#include <cuda.h>
#include <string.h>

static int fake_cc_major = 9, fake_cc_minor = 0, fake_no_ctx;

static CUresult f_ctx_get_device(CUdevice *d)
{
    *d = 0;
    return fake_no_ctx ? CUDA_ERROR_INVALID_CONTEXT : CUDA_SUCCESS;
}
static CUresult f_attr(int *v, CUdevice_attribute a, CUdevice d)
{
    (void)d;
    *v = a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? fake_cc_major : fake_cc_minor;
    return CUDA_SUCCESS;
}
static CUresult f_driver_version(int *v) { *v = 13000; return CUDA_SUCCESS; }

static void *fake_resolve(const char *sym)
{
    static const struct { const char *n; void *f; } t[] = {
        { "cuLinkCreate_v2", (void *)f_link_create },
        { "cuLinkAddData_v2", (void *)f_link_add },
        { "cuLinkComplete", (void *)f_link_complete },
        { "cuLinkDestroy", (void *)f_link_destroy },
        { "cuCtxGetDevice", (void *)f_ctx_get_device },
        { "cuDeviceGetAttribute", (void *)f_attr },
        { "cuDriverGetVersion", (void *)f_driver_version },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(t[i].n, sym))
            return t[i].f;
    return NULL;
}

#endif
