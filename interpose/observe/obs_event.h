/*
 * obs_event.h — events parts of devmalloc report to the shim's NVTX markers
 * (nvtx.c). Parts that are also built without the shim (the re-link library
 * and its tests) reference dm_obs_event weakly and call it only when present:
 *     if (dm_obs_event) dm_obs_event(DM_OBS_CACHE_HIT, label);
 *
 * Locking: none (dm_obs_event is thread-safe).
 */
#ifndef DM_OBS_EVENT_H
#define DM_OBS_EVENT_H
enum {
  DM_OBS_CACHE_HIT = 1,   /* a re-linked image came from the cache */
  DM_OBS_CACHE_MISS,      /* ... had to be linked */
  DM_OBS_HEAP_GROW,       /* the heap mapped more memory (not emitted yet: fixed-size heaps) */
  DM_OBS_HEAP_TRIM        /* the heap unmapped memory (not emitted yet) */
};
void dm_obs_event(int kind, const char *label) __attribute__((weak));
#endif
