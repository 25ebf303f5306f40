/*
 * nvtx.h — NVTX ranges and markers in the "devmalloc" domain (nvtx.c).
 *
 * Locking: every function may be called from any thread.
 */
#ifndef DM_NVTX_H
#define DM_NVTX_H
#include "obs_event.h"

/* ---- nvtx.c -------------------------------------------------------------- */
/* Ranges nest per thread; all are no-ops unless DEVMALLOC_NVTX=1. The first
 * NVTX call loads the profiler's injection library: dm_nvtx_init() does it
 * where no shim lock is held, before the calls made under one. */
void dm_nvtx_init(void);
void dm_nvtx_push(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void dm_nvtx_pop(void);
void dm_nvtx_mark(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A marker for an event another part reports (kinds: obs_event.h). */
void dm_obs_event(int kind, const char *label);

#endif
