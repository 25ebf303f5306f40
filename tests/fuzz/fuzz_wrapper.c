/*
 * fuzz_wrapper.c — libFuzzer target for the registration-wrapper path of
 * the load hooks: a wrapper (magic 0x466243B1, version, pointer) pointing at
 * the input placed as an unsized fatbin (guarded.h), through the pre-scan
 * and then the bounds-checked fatbin reader over what the pre-scan bounded.
 */
#include "shim.h"
#include "fatbin.h"
#include "decompress.h"
#include "guarded.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  unsigned char *p = guarded_copy(data, size);
  if (!p) return 0;
  struct {
    uint32_t magic, version;
    const void *fatbin, *unused;
  } w = {DM_FATBIN_WRAPPER_MAGIC, 1, p, NULL};
  size_t n;
  const void *img = dm_image_bound(&w, &n);
  dm_image_has_devmalloc(&w);
  if (!img) return 0;
  guarded_check(img, n);
  dm_fatbin_t fb;
  char why[200];
  if (dm_fatbin_open(img, n, &fb, why, sizeof why) != 0) return 0;
  size_t cur = 0;
  dm_fb_entry_t e;
  int guard = 0;
  while (dm_fatbin_next(&fb, &cur, &e, why, sizeof why) == 1 && guard++ < 4096) {
    guarded_check(e.payload, e.payload_size);
    unsigned char *out;
    size_t osz;
    if (dm_fb_entry_load(&e, &out, &osz, why, sizeof why) == 0) free(out);
  }
  return 0;
}
