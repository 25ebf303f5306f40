/*
 * shim.h — private header of the LD_PRELOAD shim (libdevmalloc_preload.so):
 * shared types and the prototypes of every shim module, grouped by the file
 * that defines them. The public API the shim calls is include/devmalloc.h.
 *
 * Error convention (whole shim):
 *   - hooks return exactly the CUresult the application would see from the
 *     driver; the shim's own failures never turn a driver success into an
 *     error (they are logged and the launch/load proceeds);
 *   - internal functions return 0 on success and -1 on failure, or a
 *     documented enum; they log what went wrong themselves.
 *
 * Reentrancy: dm_tls_busy is set while the shim runs driver work of its own
 * (heap creation, binding, probing); hooks entered while it is set pass
 * straight to the real driver function.
 */
#ifndef DM_SHIM_H
#define DM_SHIM_H

#include <cuda.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdarg.h>
#include "options/options.h"
#include "options/log.h"
#include "image/image.h"
#include "pool/pool_hooks.h"
#include "devmalloc.h"

#define DM_HIDDEN __attribute__((visibility("hidden")))
#define DM_EXPORT __attribute__((visibility("default")))

/* ---- hooks.c : the hook table generated from hooks.def -------------------- */
typedef enum {
#define DM_HOOK(sym, base, ptds, since, handler, params, args) DM_ID_##sym,
#include "hooks.def"
#undef DM_HOOK
  DM_NUM_HOOKS
} dm_hook_id_t;

typedef struct dm_hook {
  const char *sym;  /* exact driver symbol */
  const char *base; /* name given to cuGetProcAddress */
  int ptds;         /* 1: _ptsz/_ptds variant */
  int since;        /* first cudaVersion answering base with sym */
  void *hook;       /* our exported wrapper */
} dm_hook_t;

typedef struct dm_alias {
  const char *base;
  int ptds;
  int since;
  int id;
} dm_alias_t;

extern const dm_hook_t dm_hooks[DM_NUM_HOOKS];
extern const dm_alias_t dm_aliases[];
extern const size_t dm_num_aliases;

/* Table lookups: -1 when not found. */
int dm_hook_by_sym(const char *sym);
int dm_hook_by_ptr(const void *hook);  /* our wrapper -> id */
int dm_hook_by_real(const void *real); /* driver fn -> id  */
int dm_hook_by_base(const char *base, int cuda_version, uint64_t flags);
/* What the shim answers for a driver pointer `real` returned for `symbol`
 * by cuGetProcAddress(symbol, version, flags): our hook, or `real`. */
void *dm_hook_answer(const char *symbol, void *real, int cuda_version, uint64_t flags);

/* ---- real.c : real entry points of the hooks, the driver's first use ------ */
/* Real entry point of a hook (resolved on demand; NULL if the driver lacks it). */
void *dm_real(dm_hook_id_t id);
/* Record a real entry point met through dlsym or cuGetProcAddress (first one
 * wins). The caller makes sure it is not one of our wrappers (dm_hook_by_ptr). */
void dm_real_offer(dm_hook_id_t id, void *real);
/* The driver's first use (once): register the fork handlers, open libcuda,
 * connect the parts. Returns 0, or -1 if libcuda is not found. */
int dm_driver_init(void);
/* Resolve a symbol in libcuda itself (never the shim); NULL if absent. */
void *dm_driver_sym(const char *sym);

/* ---- driver.c : libcuda handle, internal entry points --------------------- */
typedef struct dm_drv {
#define DM_DRV(sym, params) CUresult(*sym) params;
#include "driver.def"
#undef DM_DRV
} dm_drv_t;
extern dm_drv_t dm_drv; /* missing entries point at a stub erroring */
/* Open libcuda and fill dm_drv; its handle, or NULL (logged) when libcuda is
 * not found. Once, from dm_driver_init. */
void *dm_driver_open(void);
/* Tests: use this library instead of libcuda.so.1 (before dm_driver_init). */
void dm_driver_set_library(const char *path);
/* 1 once any hook has asked for the driver (the process uses CUDA); set by
 * dm_driver_init. */
int dm_driver_used(void);
void dm_driver_mark_used(void);
const char *dm_cu_err(CUresult r);
/* Name of the exported symbol at exactly `addr`, or NULL. */
const char *dm_driver_export_name(const void *addr);
/* Context a launch on hStream runs in. */
CUcontext dm_stream_ctx(CUstream hStream);

/* ---- dlsym.c, real_dlsym.c, dlsym_entry.S : dlsym interposition -------- */
/* The real dlsym (dlvsym GLIBC_2.34, else GLIBC_2.2.5). */
void *dm_real_dlsym(void *handle, const char *name);
/* dlsym for a name starting with "cu", reached by a jump from dlsym_entry.S
 * (so its return address is the application's). */
void *dm_dlsym_cu(void *handle, const char *name);
/* Look up the real dlsym once; NULL when re-entered from that look-up. */
void *(*dm_dlsym_resolve(void))(void *, const char *);

/* ---- jit_ahead.c : re-linked images read while the first context is made -- */
/* Start reading the executable's re-linked images for device dev from the
 * cache in a thread: 1 when started (the caller then calls
 * dm_jit_ahead_end), 0 when off or started before. */
int dm_jit_ahead_begin(CUdevice dev);
/* Wait for that thread. */
void dm_jit_ahead_end(void);

/* ---- state.c : process-wide switches ------------------------------------ */
extern __thread int dm_tls_busy;
/* 1 when hooks must pass straight through (DEVMALLOC_DISABLE or reentry). */
int dm_passthrough(void);
/* Set once any loaded image may hold devmalloc (yes or unknown); until then
 * launches cost one relaxed atomic load. */
void dm_candidates_set(void);
int dm_candidates(void);

/* ---- fork.c : the shim's locks across fork() ----------------------------- */
void dm_fork_register(void); /* once; from the driver's first use */
/* Each lock's owner: take its lock before a fork, release it after it in the
 * parent; in the child (a new thread id) the lock is initialized afresh. */
typedef enum { DM_FORK_TAKE, DM_FORK_PARENT, DM_FORK_CHILD } dm_fork_phase_t;
void dm_owner_fork(dm_fork_phase_t ph);        /* owners.c: owner lock */
void dm_ctx_fork(dm_fork_phase_t ph);          /* ctxtab.c */
void dm_launch_cache_fork(dm_fork_phase_t ph); /* owners.c: launch cache rwlock */
void dm_graphs_fork(dm_fork_phase_t ph);       /* graphs.c */
static inline void dm_mutex_fork(pthread_mutex_t *m, dm_fork_phase_t ph) {
  if (ph == DM_FORK_TAKE)
    pthread_mutex_lock(m);
  else if (ph == DM_FORK_PARENT)
    pthread_mutex_unlock(m);
  else
    pthread_mutex_init(m, NULL);
}

/* Room for one more element in a doubling array: *arr holds *cap elements of
 * `size` bytes, n of them in use. 0, or -1 when out of memory (unchanged). */
int dm_grow_array(void **arr, size_t *cap, size_t n, size_t size);

/* ---- limit.c : the heap-size limit state machine (pure) ------------------ */
typedef struct dm_limit {
  int app_set; /* the application set CU_LIMIT_MALLOC_HEAP_SIZE */
  size_t app_value;
  int heap_created; /* devmalloc heap exists */
  int heap_bound;   /* a module was bound to it: its size is fixed */
  size_t heap_bytes;
  int grows; /* the heap grows: any value up to max_bytes is accepted */
  size_t max_bytes;
} dm_limit_t;
typedef enum {
  DM_LIMIT_RECORD, /* record value, also pass to the stock driver */
  DM_LIMIT_NOOP,   /* same as the existing heap: success, nothing to do */
  DM_LIMIT_REJECT, /* heap in use with another size: invalid value */
  DM_LIMIT_RESIZE  /* heap exists, no module bound yet: replace it (the
                           * caller destroys it), then as RECORD */
} dm_limit_action_t;
dm_limit_action_t dm_limit_set(dm_limit_t *l, size_t value);
/* Value cuCtxGetLimit reports; 0 means "ask the driver" (stock value). */
size_t dm_limit_report(const dm_limit_t *l, const dm_opt_size_t *env, uint64_t free_bytes,
                       int devmalloc_seen);
/* Bytes for a new heap. */
size_t dm_limit_heap_bytes(const dm_limit_t *l, const dm_opt_size_t *env, uint64_t free_bytes);
/* A new heap that grows: its maximum (0: the device's memory) and the bytes
 * it starts with. `initial` is DEVMALLOC_HEAP_INITIAL, `limit_is_max`
 * DEVMALLOC_LIMIT_IS_MAX. */
void dm_limit_grow_bytes(const dm_limit_t *l, const dm_opt_size_t *env, uint64_t free_bytes, size_t initial,
                         int limit_is_max, size_t *max_out, size_t *initial_out);

/* ---- parts.c : the other parts, behind tables for tests ------------------ */
/* parts.c is the one file that names the host runtime's API, the re-link's
 * and the host pool's; host tests link fakes of these tables instead. */
typedef struct dm_heap_ops {
  devmalloc_status_t (*create)(CUcontext, size_t, devmalloc_heap_t **);
  devmalloc_status_t (*bind_module)(devmalloc_heap_t *, CUmodule);
  devmalloc_status_t (*bind_library)(devmalloc_heap_t *, CUlibrary);
  devmalloc_status_t (*stats)(devmalloc_heap_t *, devmalloc_stats_t *);
  devmalloc_status_t (*destroy)(devmalloc_heap_t *);
  const char *(*status_string)(devmalloc_status_t);
  void (*stats_print)(const devmalloc_stats_t *, void *, const char *);
  devmalloc_status_t (*set_min_block)(devmalloc_heap_t *, size_t);
  devmalloc_status_t (*set_check)(devmalloc_heap_t *, int);
  devmalloc_status_t (*set_dense)(devmalloc_heap_t *, int);
  devmalloc_status_t (*create_growing)(CUcontext, const devmalloc_grow_config_t *, devmalloc_heap_t **,
                                       const char **);
  devmalloc_status_t (*trim_start)(devmalloc_heap_t *, size_t);
  int (*grows)(const devmalloc_heap_t *);
  void (*abandon)(devmalloc_heap_t *);
} dm_heap_ops_t;
extern const dm_heap_ops_t *dm_heap_ops;
/* Load-time re-link (relink/relink.h). */
typedef struct dm_relink_ops {
  int (*sized)(const void *image, const void *body, size_t len, const void **out, size_t *out_size, char *why,
               size_t whylen);
  int (*file)(const char *path, const void **out, size_t *out_size, char *why, size_t whylen);
  void (*release)(const void *image);
  int (*read_ahead)(const void *body, size_t len, int dev, char *why, size_t whylen);
} dm_relink_ops_t;
extern const dm_relink_ops_t *dm_relink_ops;
/* The host pool behind cuMemAlloc/cuMemFree (pool/pool_hooks.h, pool_glue.h). */
typedef struct dm_pool_ops {
  int (*enabled)(void);
  CUresult (*mem_alloc)(CUdeviceptr *dptr, size_t bytes, dm_real_mem_alloc_fn real_alloc);
  CUresult (*mem_alloc_pitch)(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height,
                              unsigned int elem, dm_real_mem_alloc_fn real_alloc);
  CUresult (*mem_free)(CUdeviceptr dptr, dm_real_mem_free_fn real_free);
  CUresult (*mem_get_info)(size_t *free_b, size_t *total_b, dm_real_mem_get_info_fn real);
  void (*print_stats)(void *file);
  void (*forget_context)(CUcontext ctx); /* the context is going away */
} dm_pool_ops_t;
extern const dm_pool_ops_t *dm_pool_ops;
/* Once, from dm_driver_init with libcuda's handle: give the parts the driver
 * (the host runtime's forwarders, the re-link's resolver `sym`, the pool's
 * driver table, whose cuMemGetInfo/cuMemFree come from `real`), the shim's
 * options, log and event markers. */
void dm_parts_connect(void *libcuda, void *(*sym)(const char *), void *(*real)(dm_hook_id_t));

/* ---- ctxtab.c : context -> heap table ------------------------------------ */
/* The real entry points (real.c's dm_real), for the device's free memory;
 * set once at the driver's first use, before any context is known. */
void dm_ctx_set_real(void *(*real)(dm_hook_id_t));
/* Heap of ctx, creating it (size from limit/env/default) when absent. NULL if
 * creation failed (logged once per context). Caller holds no shim lock. */
devmalloc_heap_t *dm_ctx_heap(CUcontext ctx);
/* Heap of ctx if it exists, else NULL. */
devmalloc_heap_t *dm_ctx_heap_peek(CUcontext ctx);
/* DEVMALLOC_TRIM: unmap free memory at the top of ctx's heap if it grows. */
void dm_ctx_trim(CUcontext ctx);
/* Limit hooks' state: set returns the action; report/get as in limit.c. */
dm_limit_action_t dm_ctx_limit_set(CUcontext ctx, size_t value);
/* A module was bound to ctx's heap: its size can no longer change. */
void dm_ctx_heap_bound(CUcontext ctx);
int dm_ctx_limit_get(CUcontext ctx, size_t *out); /* 1: answered, 0: ask driver */
/* Tear down ctx's heap (stats snapshot first). `alive`: the context still
 * exists (free the heap) or is gone (forget it). */
void dm_ctx_teardown(CUcontext ctx, int alive);
/* Primary context bookkeeping: retain/release counts per device. */
void dm_ctx_primary_retained(CUdevice dev, CUcontext ctx);
CUcontext dm_ctx_primary_of(CUdevice dev);
int dm_ctx_primary_released(CUdevice dev); /* returns remaining count */
/* Read ctx's stats now, printed at exit if the context disappears. */
void dm_ctx_snapshot(CUcontext ctx);
/* Print every context's stats (live and torn down) to the log. */
void dm_ctx_print_stats(void);
/* Number of contexts with a heap (tests, stats). */
size_t dm_ctx_count(void);
#ifdef DM_TESTING
/* Test builds only (-DDM_TESTING): forget every context. */
void dm_ctx_reset_for_tests(void);
#endif

/* ---- owners.c : modules/libraries and the launch cache ------------------- */
typedef enum { DM_OWNER_MODULE = 1, DM_OWNER_LIBRARY = 2 } dm_owner_kind_t;
typedef enum { DM_VERDICT_NONE = 1, DM_VERDICT_BOUND = 2 } dm_verdict_t;
/* Launch cache: (function or kernel handle, context) -> verdict. */
int dm_lcache_get(const void *f, CUcontext ctx, dm_verdict_t *v);
void dm_lcache_put(const void *f, CUcontext ctx, dm_verdict_t v, const void *owner);
void dm_lcache_purge_ctx(CUcontext ctx);
void dm_lcache_purge_owner(const void *owner);
void dm_lcache_clear(void);
size_t dm_lcache_size(void);
/* Owner records; callers hold dm_owner_lock(). */
typedef struct dm_owner dm_owner_t;
void dm_owner_lock(void);
void dm_owner_unlock(void);
dm_owner_t *dm_owner_get(dm_owner_kind_t kind, const void *handle, int create);
void dm_owner_remove(const void *handle);
void dm_owner_forget_ctx(CUcontext ctx);    /* modules of ctx go, libraries unbind */
void dm_owner_forget_derived(void);         /* records not made by a load hook */
void dm_owner_unloaded(const void *handle); /* remove + forget_derived, under the lock */
dm_has_t dm_owner_has(const dm_owner_t *o);
void dm_owner_set_has(dm_owner_t *o, dm_has_t h);
void dm_owner_set_loaded(dm_owner_t *o, const char *what);
void dm_owner_set_ctx(dm_owner_t *o, CUcontext ctx);
const char *dm_owner_name(const dm_owner_t *o);
int dm_owner_bound_in(const dm_owner_t *o, CUcontext ctx);
void dm_owner_set_bound(dm_owner_t *o, CUcontext ctx);
size_t dm_owner_count(void);
#ifdef DM_TESTING
/* Test builds only (-DDM_TESTING): forget every owner and the launch cache. */
void dm_owners_reset_for_tests(void);
#endif

/* ---- bind.c : make sure a kernel's module is bound in a context ---------- */
/* Called before a launch of f (CUfunction or CUkernel) on hStream. Never
 * fails the launch; logs problems. */
void dm_prepare_launch(CUfunction f, CUstream hStream);
/* Same for a handle known to run in ctx (graphs). */
void dm_prepare_in_ctx(const void *f, CUcontext ctx);
/* Same for a known owner in ctx (load time). */
void dm_prepare_owner(dm_owner_kind_t kind, const void *handle, CUcontext ctx);
/* Create ctx's heap now (context pushed, capture relaxed, as at a launch). */
void dm_prepare_heap(CUcontext ctx);

/* ---- graphs.c ------------------------------------------------------------- */
void dm_graph_prepare(CUgraph g, CUgraphExec exec);
void dm_graph_exec_launch(CUgraphExec exec, CUstream s);
void dm_graph_exec_forget(CUgraphExec exec);

/* ---- hook handlers (hook_*.c): handler(real, args...) --------------------- */
#define DM_UNPAREN(...) __VA_ARGS__
/* ", a, b" for (a, b), nothing for (): a handler's arguments after `real`,
 * so that a driver function without parameters (written `()` in hooks.def)
 * is hooked like the others. */
#define DM_AFTER_FIRST(...) __VA_OPT__(, ) __VA_ARGS__
#define DM_HOOK(sym, base, ptds, since, handler, params, args) typedef CUresult(*dm_pfn_##sym) params;
#include "hooks.def"
#undef DM_HOOK
#define DM_HOOK(sym, base, ptds, since, handler, params, args) \
  CUresult handler(dm_pfn_##sym real DM_AFTER_FIRST params);
#include "hooks.def"
#undef DM_HOOK

#endif
