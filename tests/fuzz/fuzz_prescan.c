/*
 * fuzz_prescan.c — libFuzzer target for the load-time pre-scan
 * (interpose/image/image_bound.c, image_scan.c): the input as an image passed
 * without a size (guarded.h), and the bounded scan over the exact input.
 * Whatever bound the pre-scan derives must lie inside the input (see
 * guarded_bound() for inputs that look like a registration wrapper).
 */
#include "shim.h"
#include "guarded.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dm_image_scan(data, size);
  unsigned char *p;
  size_t n;
  const void *img = guarded_bound(data, size, &p, &n);
  if (img) dm_image_scan(img, n);
  if (p) dm_image_has_devmalloc(p);
  return 0;
}
