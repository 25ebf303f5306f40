/*
 * relink.h — load-time re-link of unmodified modules with devmalloc (contract
 * between the shim's load hooks and the fatbin/JIT code).
 *
 * The shim's hooks for cuLibraryLoadData, cuModuleLoadData(Ex),
 * cuModuleLoadFatBinary and the file variants call dm_relink_image() with the
 * image they were given (a registration wrapper, a fatbin, a cubin or PTX text)
 * while the caller's context is current. When it returns 1, the shim loads
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

int  dm_relink_image(const void *image, const void **out, size_t *out_size,
                     char *why, size_t whylen);
/* Read a module file (cuModuleLoad / cuLibraryLoadFromFile) and re-link it. */
int  dm_relink_file(const char *path, const void **out, size_t *out_size,
                    char *why, size_t whylen);
void dm_relink_free(const void *image);

#endif
