/*
 * cubin_elf.c — libelf inspection of device images. See cubin_elf.h.
 * Locking: libelf's global version is set once under pthread_once.
 */
#include "cubin_elf.h"
#include "relink_err.h"
#include <elf.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* .nv.global: occupies no file bytes, like SHT_NOBITS. */
#define DM_SHT_CUDA_NOBITS (SHT_LOPROC + 7)

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;
static int elf_ok;
static void elf_init(void) { elf_ok = elf_version(EV_CURRENT) != EV_NONE; }

static int is_aligned_name(const char *n) {
  return !strcmp(n, "__cuda_syscall_aligned_malloc") || !strcmp(n, "__nv_aligned_device_malloc_impl") ||
         !strcmp(n, "__nv_aligned_device_malloc");
}

static void note_symbol(dm_cubin_info_t *info, const char *name, const GElf_Sym *s) {
  int und = s->st_shndx == SHN_UNDEF;
  if (!strcmp(name, DM_HEAP_DESC_SYMBOL)) {
    if (!und) info->has_heap_desc = 1;
    return;
  }
  if (GELF_ST_BIND(s->st_info) == STB_LOCAL) return;
  if (dm_is_devrt_symbol(name))
    *(und ? &info->calls_devrt : &info->defines_devrt) = 1;
  else if (!strcmp(name, "malloc"))
    *(und ? &info->calls_malloc : &info->defines_malloc) = 1;
  else if (!strcmp(name, "free"))
    *(und ? &info->calls_free : &info->defines_free) = 1;
  else if (is_aligned_name(name))
    *(und ? &info->calls_aligned : &info->defines_aligned) = 1;
}

/* One symbol seen by a walk: returns nonzero to stop the walk. */
typedef int (*sym_visit_fn)(const char *name, const GElf_Sym *s, void *arg);

static int scan_symtabs(Elf *e, sym_visit_fn visit, void *arg, unsigned *nsyms, char *why, size_t whylen) {
  Elf_Scn *scn = NULL;
  int found = 0;
  while ((scn = elf_nextscn(e, scn)) != NULL) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh))
      return dm_fail(-EINVAL, why, whylen, "cubin: bad section header: %s", elf_errmsg(-1));
    if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) continue;
    if (sh.sh_entsize == 0) return dm_fail(-EINVAL, why, whylen, "cubin: symbol table entry size 0");
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d) return dm_fail(-EINVAL, why, whylen, "cubin: unreadable symbol table: %s", elf_errmsg(-1));
    size_t n = d->d_size / sh.sh_entsize;
    found = 1;
    for (size_t i = 0; i < n; i++) {
      GElf_Sym s;
      if (!gelf_getsym(d, (int)i, &s)) return dm_fail(-EINVAL, why, whylen, "cubin: bad symbol %zu", i);
      const char *name = elf_strptr(e, sh.sh_link, s.st_name);
      (*nsyms)++;
      if (name && visit(name, &s, arg)) return 0;
    }
  }
  if (!found) return dm_fail(-ENOENT, why, whylen, "cubin has no symbol table");
  return 0;
}

/* Walk the symbols of the cubin at img (a private copy is given to libelf);
 * info gets its header fields. */
static int walk_cubin(const void *img, size_t len, dm_cubin_info_t *info, sym_visit_fn visit, void *arg,
                      char *why, size_t whylen) {
  memset(info, 0, sizeof *info);
  if (!img || len < sizeof(Elf64_Ehdr))
    return dm_fail(-EINVAL, why, whylen, "cubin truncated (%zu bytes)", len);
  if (memcmp(img, ELFMAG, SELFMAG) != 0) return dm_fail(-EINVAL, why, whylen, "not an ELF image");
  pthread_once(&elf_once, elf_init);
  if (!elf_ok) return dm_fail(-EIO, why, whylen, "libelf: version mismatch");
  /* libelf wants a writable buffer; give it a private copy. */
  char *copy = malloc(len);
  if (!copy) return dm_fail(-ENOMEM, why, whylen, "out of memory");
  memcpy(copy, img, len);
  int rc = 0;
  Elf *e = elf_memory(copy, len);
  if (!e || elf_kind(e) != ELF_K_ELF) {
    rc = dm_fail(-EINVAL, why, whylen, "cubin: %s", elf_errmsg(-1));
    goto out;
  }
  GElf_Ehdr eh;
  if (!gelf_getehdr(e, &eh)) {
    rc = dm_fail(-EINVAL, why, whylen, "cubin: bad ELF header: %s", elf_errmsg(-1));
    goto out;
  }
  info->machine = eh.e_machine;
  if (eh.e_machine != DM_EM_CUDA) {
    rc = dm_fail(-EINVAL, why, whylen, "ELF machine %u is not a cubin (190)", eh.e_machine);
    goto out;
  }
  info->relocatable = eh.e_type == ET_REL;
  info->sm = eh.e_ident[EI_ABIVERSION] >= 8 ? (eh.e_flags >> 8) & 0xff : eh.e_flags & 0xff;
  rc = scan_symtabs(e, visit, arg, &info->nsyms, why, whylen);
out:
  if (e) elf_end(e);
  free(copy);
  return rc;
}

static int visit_info(const char *name, const GElf_Sym *s, void *arg) {
  note_symbol(arg, name, s);
  return 0;
}

int dm_cubin_inspect(const void *img, size_t len, dm_cubin_info_t *info, char *why, size_t whylen) {
  dm_cubin_info_t hdr;
  int rc = walk_cubin(img, len, &hdr, visit_info, &hdr, why, whylen);
  *info = hdr;
  return rc;
}

#define DM_STO_CUDA_ENTRY 0x10

typedef struct {
  int (*fn)(const char *, void *);
  void *arg;
} kernel_walk_t;

static int visit_kernel(const char *name, const GElf_Sym *s, void *arg) {
  const kernel_walk_t *w = arg;
  if (GELF_ST_TYPE(s->st_info) != STT_FUNC || GELF_ST_BIND(s->st_info) == STB_LOCAL ||
      s->st_shndx == SHN_UNDEF || !(s->st_other & DM_STO_CUDA_ENTRY))
    return 0;
  return w->fn(name, w->arg);
}

int dm_cubin_kernels(const void *img, size_t len, int (*fn)(const char *name, void *arg), void *arg,
                     char *why, size_t whylen) {
  dm_cubin_info_t hdr;
  kernel_walk_t w = {fn, arg};
  return walk_cubin(img, len, &hdr, visit_kernel, &w, why, whylen);
}

int dm_elf_image_size(const void *img, size_t maxlen, size_t *size, char *why, size_t whylen) {
  const unsigned char *b = img;
  Elf64_Ehdr eh;
  if (!b || maxlen < sizeof eh) return dm_fail(-EINVAL, why, whylen, "ELF truncated");
  memcpy(&eh, b, sizeof eh);
  if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64)
    return dm_fail(-EINVAL, why, whylen, "not a 64-bit ELF image");
  uint64_t end = sizeof eh;
  if (eh.e_phnum && eh.e_phentsize) {
    uint64_t e = eh.e_phoff + (uint64_t)eh.e_phnum * eh.e_phentsize;
    if (e > end) end = e;
  }
  if (eh.e_shnum) {
    if (eh.e_shentsize != sizeof(Elf64_Shdr))
      return dm_fail(-EINVAL, why, whylen, "ELF section header size %u", eh.e_shentsize);
    uint64_t tab = eh.e_shoff + (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr);
    if (eh.e_shoff > maxlen || tab > maxlen)
      return dm_fail(-EINVAL, why, whylen, "ELF section table out of bounds");
    if (tab > end) end = tab;
    for (unsigned i = 0; i < eh.e_shnum; i++) {
      Elf64_Shdr sh;
      memcpy(&sh, b + eh.e_shoff + (uint64_t)i * sizeof sh, sizeof sh);
      if (sh.sh_type == SHT_NOBITS || sh.sh_type == DM_SHT_CUDA_NOBITS) continue;
      uint64_t e = sh.sh_offset + sh.sh_size;
      if (e < sh.sh_offset) return dm_fail(-EINVAL, why, whylen, "ELF section %u size overflows", i);
      if (e > end) end = e;
    }
  }
  if (end > maxlen || end > DM_IMAGE_MAX)
    return dm_fail(-EINVAL, why, whylen, "ELF image of %llu bytes exceeds %zu", (unsigned long long)end,
                   maxlen);
  *size = (size_t)end;
  return 0;
}
