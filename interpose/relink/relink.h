/*
 * relink.h — load-time re-link of unmodified modules with devmalloc (contract
 * between the shim's load hooks and the fatbin/JIT code).
 *
 * The shim's hooks for cuLibraryLoadData, cuModuleLoadData(Ex) and
 * cuModuleLoadFatBinary call dm_relink_sized() with the image they were given
 * (a fatbin — a registration wrapper's already followed —, a cubin or PTX
 * text) once interpose/image/image_bound.c has delimited it; the file variants call
 * dm_relink_file(). Both run while the caller's context is current. When it returns 1, the shim loads
 * *out instead of the original and releases it with dm_relink_free() after the
 * load. When it returns 0, the shim loads the original image unchanged; `why`
 * then holds one line saying why (printed at verbose level).
 *
 * Thread safety: callable from any thread at once; the cache uses atomic
 * renames and takes no process-wide lock while JIT-linking.
 */
#ifndef DM_RELINK_H
#define DM_RELINK_H
#include <stddef.h>

int dm_relink_image(const void *image, const void **out, size_t *out_size, char *why, size_t whylen);
/* The same for an image the caller has delimited: `body` (the fatbin a
 * registration wrapper points to, or `image` itself) holds `len` readable
 * bytes; `image` only names the module in messages. The shim's load hooks use
 * this, after interpose/image/image_bound.c; dm_relink_image() takes the image's
 * own header sizes on trust and is for images the caller built. */
int dm_relink_sized(const void *image, const void *body, size_t len, const void **out, size_t *out_size,
                    char *why, size_t whylen);
/* Read a module file (cuModuleLoad / cuLibraryLoadFromFile) and re-link it. */
int dm_relink_file(const char *path, const void **out, size_t *out_size, char *why, size_t whylen);
void dm_relink_free(const void *image);

/* Read ahead: the re-linked image of the fatbin at `body` (`len` bytes, as
 * image_bound.c delimited it) for device ordinal `dev`, from the cache only
 * (no JIT link, no context needed), kept for the load that re-links that
 * fatbin for a device of the same target: dm_relink_sized then hands it over
 * instead of reading the cache again. 1 when kept; 0 with `why` when the
 * cache has no image for it (nothing is linked here), the module needs none
 * (no malloc, devmalloc inside) or the cache is off. For a thread of the
 * shim's while the application's first context is being created. */
int dm_relink_read_ahead(const void *body, size_t len, int dev, char *why, size_t whylen);

/* Where cache hits and misses are reported (kind: DM_OBS_CACHE_HIT or
 * DM_OBS_CACHE_MISS of observe/obs_event.h, label: the module); NULL: nowhere
 * (the default). The shim sets its NVTX markers once, before loads. */
typedef void (*dm_relink_event_fn)(int kind, const char *label);
void dm_relink_set_events(dm_relink_event_fn fn);

#endif
