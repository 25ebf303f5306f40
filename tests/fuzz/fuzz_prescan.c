/*
 * fuzz_prescan.c — libFuzzer target for the load-time pre-scan
 * (interpose/image_bound.c, image_scan.c): the input as an image passed
 * without a size (guarded.h), and the bounded scan over the exact input.
 * Whatever bound the pre-scan derives must lie inside the input. Inputs
 * that start like a registration wrapper are scanned sized only: the
 * pointer inside would be wild, and ASan's instrumentation faults on memory
 * the probe rightly finds readable (its own shadow ranges); fuzz_wrapper
 * covers the wrapper with a pointer that stays in range.
 */
#include "shim.h"
#include "guarded.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dm_image_scan(data, size);
    uint32_t magic = 0;
    memcpy(&magic, data, size < 4 ? size : 4);
    unsigned char *p = magic == 0x466243B1u ? NULL : guarded_copy(data, size);
    if (!p || !size)
        return 0;
    size_t n;
    const void *img = dm_image_bound(p, &n);
    if (img) {
        guarded_check(img, n);
        dm_image_scan(img, n);
    }
    dm_image_has_devmalloc(p);
    return 0;
}
