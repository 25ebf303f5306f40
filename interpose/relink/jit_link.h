/*
 * jit_link.h — the Driver API calls of the re-link: which device is current
 * (compute capability, driver version) and the JIT link of several inputs
 * (PTX, relocatable cubins, a static library of device code) into one cubin
 * (cuLinkCreate, cuLinkAddData or cuLinkAddFile per input, cuLinkComplete,
 * copy, cuLinkDestroy).
 *
 * Entry points are resolved at run time (nothing links against libcuda): by
 * default with dlopen("libcuda.so.1") + dlsym of the exported versioned names
 * ("cuLinkCreate_v2", ...). The shim, which interposes dlsym, should install
 * its own resolver returning the driver's real entry points with
 * dm_jit_set_resolver() before the first re-link.
 *
 * Errors: relink_err.h (-EIO: a driver call failed; why has the CUresult and
 * the first line of the JIT error log). Locking: the entry-point table is
 * filled once (pthread_once) and read-only afterwards; link states are per
 * call, so calls may run concurrently.
 */
#ifndef DM_JIT_LINK_H
#define DM_JIT_LINK_H
#include <stddef.h>

typedef void *(*dm_driver_resolver_fn)(const char *symbol);
void dm_jit_set_resolver(dm_driver_resolver_fn fn);

typedef struct {
  int cc_major, cc_minor; /* current context's device */
  int driver_version;     /* cuDriverGetVersion, e.g. 13000 */
  char driver_id[128];    /* kernel module version line, if readable */
} dm_jit_target_t;

int dm_jit_target(dm_jit_target_t *t, char *why, size_t whylen);
/* The same for device ordinal `dev` (a CUdevice), current or not. */
int dm_jit_target_of(int dev, dm_jit_target_t *t, char *why, size_t whylen);

/* Register cap for devmalloc's own PTX (mk/device.mk, DEVICE_MAXRREG: keep
 * equal). Code that calls the built-in malloc/free keeps live values in
 * registers above R31 across the call; an allocator compiled with more
 * registers clobbers them (docs/design.md, "Calling convention"). */
#define DM_DEVICE_MAXRREG 24

enum {
  DM_JIT_IN_PTX = 0, /* ptx: NUL-terminated text, size: strlen */
  DM_JIT_IN_CUBIN,   /* ptx: a relocatable cubin, size: its bytes */
  DM_JIT_IN_LIBRARY, /* ptx: path of a static library (libcudadevrt.a) */
};

typedef struct {
  const char *name;       /* shown in JIT logs */
  const char *ptx;        /* the input (kind says what) */
  size_t size;            /* strlen(ptx) */
  unsigned max_registers; /* 0: no cap; else CU_JIT_MAX_REGISTERS for this input */
  int kind;               /* DM_JIT_IN_* */
} dm_jit_input_t;

/* Link n inputs for the current context's device; *cubin is malloc'd. */
int dm_jit_link(const dm_jit_input_t *in, int n, void **cubin, size_t *cubin_size, char *why, size_t whylen);

#endif
