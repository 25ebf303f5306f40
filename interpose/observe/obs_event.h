/*
 * obs_event.h — the kinds of events other parts report to the shim's NVTX
 * markers (dm_obs_event, nvtx.c): the re-link through the function the shim
 * gives it (relink.h: dm_relink_set_events).
 *
 * Locking: none (dm_obs_event is thread-safe).
 */
#ifndef DM_OBS_EVENT_H
#define DM_OBS_EVENT_H
enum {
  DM_OBS_CACHE_HIT = 1, /* a re-linked image came from the cache */
  DM_OBS_CACHE_MISS,    /* ... had to be linked */
  DM_OBS_HEAP_GROW,     /* the heap mapped more memory (not emitted yet: fixed-size heaps) */
  DM_OBS_HEAP_TRIM      /* the heap unmapped memory (not emitted yet) */
};
#endif
