/*
 * ptx_inline.h — free's common path (device/devmalloc.cu: dm_free_common)
 * written into an application's PTX at its calls of `free`, so that the
 * re-link compiles it into the caller instead of calling it (docs/jit.md,
 * "Inlined calls"; DEVMALLOC_JIT_INLINE).
 *
 * Each call block of the application (the `{ ... }` nvcc wraps around a
 * call: its `.param` declarations, the stores of the arguments, the call,
 * the load of a result) to `free` becomes a block with the body of
 * dm_free_common, its registers and labels renamed for that call, its
 * parameters moved from the caller's arguments (a result into the caller's
 * register), its `ret` a branch to the block's end; at most
 * DM_INLINE_PER_FUNC calls of a function, the rest stay calls. What the body
 * calls out of line (the slow path) and the globals it reads are declared
 * `.extern`, and resolved by the link with devmalloc's code as before. A
 * call block of any other shape is left a call, and so is `malloc`: its body
 * lengthened the compile of each caller many times over (docs/decisions.md,
 * "Inlining under the shim").
 *
 * Pure text to text; no state. Locking: none.
 */
#ifndef DM_PTX_INLINE_H
#define DM_PTX_INLINE_H
#include <stddef.h>

/* Inline free's common path (dm_free_common, defined in dm_ptx) into the
 * calls of free of app_ptx (n bytes, NUL-terminated). Returns the number of calls inlined
 * (> 0, *out a malloc'd NUL-terminated text of *out_len bytes), 0 when
 * there is none to inline (*out NULL), or a negative errno with why set
 * (relink_err.h): the text is not one this can rewrite. */
int dm_ptx_inline(const char *app_ptx, size_t n, const char *dm_ptx, char **out, size_t *out_len, char *why,
                  size_t whylen);

#endif /* DM_PTX_INLINE_H */
