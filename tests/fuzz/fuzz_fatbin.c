/*
 * fuzz_fatbin.c — libFuzzer target for the fatbin reader (mk/interpose_image_relink.mk:
 * `make fuzz`, corpus replay in `make check`).
 *
 * The input is handed to every reader the shim uses on untrusted images:
 * image classification, the fatbin header and entry walk (as a standalone
 * fatbin and as a host section holding several), decompression of each
 * entry (zstd, LZ4; DM_IMAGE_MAX is lowered to 16 MiB for the fuzzer), libelf
 * inspection of ELF entries and of the input itself, the ELF size probe and
 * the PTX scan. The input buffer is exactly-sized, so any read past it is an
 * AddressSanitizer report.
 */
#include "cubin_elf.h"
#include "decompress.h"
#include "fatbin.h"
#include "ptx_scan.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void walk_fatbin(const dm_fatbin_t *fb) {
  size_t cur = 0;
  dm_fb_entry_t e;
  char why[200];
  int guard = 0;
  while (dm_fatbin_next(fb, &cur, &e, why, sizeof why) == 1 && guard++ < 4096) {
    if (e.payload < fb->data || e.payload + e.payload_size > fb->data + fb->size) abort();
    unsigned char *img;
    size_t n;
    if (dm_fb_entry_load(&e, &img, &n, why, sizeof why) != 0) continue;
    if (e.kind == DM_FB_KIND_ELF) {
      dm_cubin_info_t ci;
      dm_cubin_inspect(img, n, &ci, why, sizeof why);
    } else {
      dm_ptx_info_t pi;
      dm_ptx_scan((const char *)img, n, &pi);
    }
    free(img);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char why[200];
  dm_image_kind(data, size);
  dm_fatbin_t fb;
  if (dm_fatbin_open(data, size, &fb, why, sizeof why) == 0) {
    if (fb.size > size) abort();
    walk_fatbin(&fb);
  }
  size_t off = 0;
  int guard = 0;
  while (dm_fatbin_next_in_section(data, size, &off, &fb, why, sizeof why) == 1 && guard++ < 1024)
    walk_fatbin(&fb);
  dm_cubin_info_t ci;
  dm_cubin_inspect(data, size, &ci, why, sizeof why);
  size_t esz;
  if (dm_elf_image_size(data, size, &esz, why, sizeof why) == 0 && esz > size) abort();
  dm_ptx_info_t pi;
  dm_ptx_scan((const char *)data, size, &pi);
  return 0;
}
