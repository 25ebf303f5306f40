/*
 * obs.h — the shim's observability: the heap timeline (trace.c,
 * DEVMALLOC_TRACE), the count of load-time re-links, and the context table's
 * sampler (ctxtab.c) they read counters through; NVTX ranges and markers
 * (observe/nvtx.h) and the counters' formats (observe/stats_rec.h) come
 * with it. Formats: docs/stats.md.
 *
 * Locking: trace.c has one mutex for its per-context table and the file; it
 * is never held while calling into ctxtab.c (whose lock may be held while
 * calling dm_trace_record). nvtx.c is lock-free after a pthread_once.
 */
#ifndef DM_OBS_H
#define DM_OBS_H
#include "shim.h"
#include "observe/stats_rec.h"

/* ---- ctxtab.c ------------------------------------------------------------ */
/* Read ctx's counters now (remembered as its last known counters). 0 and
 * *out filled (status DM_REC_LOST with the last known counters when the read
 * fails); -1 when ctx has no heap. */
int dm_ctx_sample(CUcontext ctx, dm_stats_rec_t *out);
typedef int (*dm_ctx_sampler_fn)(CUcontext ctx, dm_stats_rec_t *out);

/* ---- trace.c ------------------------------------------------------------- */
typedef enum { DM_TP_LAUNCH = 0, DM_TP_SYNC } dm_tpoint_t;
/* 1 when counters are sampled at launches/syncs (DEVMALLOC_TRACE set, or
 * stats on: the last known counters then survive a device fault). */
int dm_obs_sampling(void);
/* A launch of f (CUfunction or CUkernel) on stream s, or a synchronization
 * of ctx; samples when due (rules in docs/stats.md). */
void dm_obs_launch(const void *f, CUstream s);
void dm_obs_sync(CUcontext ctx);
/* The sampling rule: is a sample due at point tp, the last one age_ns ago
 * (UINT64_MAX: none yet), `since` launches later? */
int dm_trace_due(uint64_t age_ns, uint64_t since, dm_tpoint_t tp, unsigned interval_ms, int tracing);
/* Write one sample line for r (event: "create", "destroy", "exit", ...);
 * no-op when tracing is off. Safe under ctxtab's lock. */
void dm_trace_record(const dm_stats_rec_t *r, const char *event);
/* The trace reads counters through `sample` (real.c gives ctxtab.c's
 * dm_ctx_sample at the driver's first use, before any heap exists; until
 * then nothing is sampled). */
void dm_trace_set_sampler(dm_ctx_sampler_fn sample);
/* Trace the heap just created in ctx (called without shim locks). */
void dm_obs_heap_created(CUcontext ctx);
/* Sample every context the trace knows, as `event` (trace.c). */
void dm_trace_sample_all(const char *event);

/* ---- trace_timer.c: the periodic sampler (DEVMALLOC_TRACE_PERIOD) -------- */
/* Start the thread calling sample("timer") every period_ms (once; no-op if
 * already running) / stop and join it (no-op if not running, or in a forked
 * child that did not start it). */
void dm_trace_timer_start(unsigned period_ms, void (*sample)(const char *event));
void dm_trace_timer_stop(void);

/* ---- re-link count (trace.c) --------------------------------------------- */
void dm_obs_relinked(void);
uint64_t dm_obs_relinked_count(void);

#include "observe/nvtx.h"

#endif
