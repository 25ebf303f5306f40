/*
 * limit.c — the per-context CU_LIMIT_MALLOC_HEAP_SIZE state machine (pure).
 *
 *   before the context's devmalloc heap exists:
 *     set(v)  -> RECORD: remember v (the heap will have v bytes unless
 *                DEVMALLOC_HEAP_SIZE overrides); the hook also passes v to
 *                the stock driver so modules without devmalloc see it too,
 *                and creates the heap at once when devmalloc modules are
 *                loaded (hook_ctx.c), so that the first kernel does not pay
 *                for it
 *   after the heap exists:
 *     set(v == heap size) -> NOOP (success)
 *     set(other), no module bound yet -> RESIZE: the heap is replaced (no
 *                            kernel can have used it), then as RECORD
 *     set(other), a module bound (a devmalloc kernel was launched)
 *                         -> REJECT (CUDA_ERROR_INVALID_VALUE), as the
 *                            stock driver does after a malloc-using launch:
 *                            the heap cannot move under live pointers
 *   a heap that grows (DEVMALLOC_GROW): the application's value, set before
 *     the heap exists, is its maximum (DEVMALLOC_LIMIT_IS_MAX, the default)
 *     or the size it starts with (ctxtab.c); after, any value up to the
 *     heap's maximum is accepted (NOOP: the heap grows to it when needed), a
 *     larger one replaces the heap if no module is bound yet (RESIZE), else
 *     is REJECTed; report: the maximum once the heap exists.
 *   report: heap size if created; else DEVMALLOC_HEAP_SIZE if set; else the
 *     application's value if set; else the devmalloc default if any module
 *     with devmalloc was seen; else 0 = "ask the driver" (stock value).
 *   heap bytes: DEVMALLOC_HEAP_SIZE, else the application's value, else
 *     256 MiB; at least 1 MiB.
 *   a heap that grows: its maximum is DEVMALLOC_HEAP_SIZE if set, else the
 *     application's value if it set one and DEVMALLOC_LIMIT_IS_MAX (the
 *     default: NULL beyond it, as with the stock heap), else 0 (the
 *     device's memory); it starts with DEVMALLOC_HEAP_INITIAL, or the
 *     application's value when that is not the maximum; never above the
 *     maximum; both at least 1 MiB.
 * The heap-size policy is here alone; ctxtab.c creates what it says.
 *
 * May call: options/ (size values).
 *
 * Locking: none; callers (ctxtab.c) hold the context table lock.
 */
#include "shim.h"

dm_limit_action_t dm_limit_set(dm_limit_t *l, size_t value) {
  if (l->heap_created) {
    if (l->grows ? value <= l->max_bytes : value == l->heap_bytes) return DM_LIMIT_NOOP;
    if (l->heap_bound) return DM_LIMIT_REJECT;
  }
  dm_limit_action_t a = l->heap_created ? DM_LIMIT_RESIZE : DM_LIMIT_RECORD;
  l->heap_created = l->grows = 0; /* the next heap says what it is */
  l->app_set = 1;
  l->app_value = value;
  return a;
}

size_t dm_limit_heap_bytes(const dm_limit_t *l, const dm_opt_size_t *env, uint64_t free_bytes) {
  size_t b = 0;
  if (env && env->kind != DM_SIZE_UNSET)
    b = (size_t)dm_size_resolve(env, free_bytes);
  else if (l->app_set)
    b = l->app_value;
  else
    b = DM_DEFAULT_HEAP_BYTES;
  return b < DM_MIN_HEAP_BYTES ? DM_MIN_HEAP_BYTES : b;
}

void dm_limit_grow_bytes(const dm_limit_t *l, const dm_opt_size_t *env, uint64_t free_bytes, size_t initial,
                         int limit_is_max, size_t *max_out, size_t *initial_out) {
  size_t max = 0;
  if (env && env->kind != DM_SIZE_UNSET)
    max = (size_t)dm_size_resolve(env, free_bytes);
  else if (l->app_set && limit_is_max)
    max = l->app_value;
  if (l->app_set && !limit_is_max) initial = l->app_value;
  if (max && max < DM_MIN_HEAP_BYTES) max = DM_MIN_HEAP_BYTES;
  if (max && initial > max) initial = max;
  if (initial < DM_MIN_HEAP_BYTES) initial = DM_MIN_HEAP_BYTES;
  *max_out = max;
  *initial_out = initial;
}

size_t dm_limit_report(const dm_limit_t *l, const dm_opt_size_t *env, uint64_t free_bytes,
                       int devmalloc_seen) {
  if (l->heap_created) return l->grows ? l->max_bytes : l->heap_bytes;
  if ((env && env->kind != DM_SIZE_UNSET) || l->app_set || devmalloc_seen)
    return dm_limit_heap_bytes(l, env, free_bytes);
  return 0;
}
