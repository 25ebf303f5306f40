/*
 * elf_origin.c — the loaded ELF file that holds a device image, and its
 * relocatable device code (relfatbin.h).
 *
 * dl_iterate_phdr names the object whose readable PT_LOAD segments hold the
 * address (the program itself has no name: "/proc/self/exe", which the kernel
 * keeps pointing at the file that runs even when it has been replaced on
 * disk). Only the section table is read from the file; the sections are
 * SHF_ALLOC, so their bytes are read where the file is mapped, after checking
 * that they lie inside its readable segments. A file changed on disk since it
 * was loaded can only make the checks fail (the image must lie inside the
 * table's .nv_fatbin), never a read outside the mapping.
 *
 * Locking: none (dl_iterate_phdr holds the loader's lock while it calls us).
 */
#include "relfatbin.h"
#include "relink_err.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SHSTRTAB (4u << 20)

static int read_at(int fd, void *buf, size_t n, uint64_t off) {
  return pread(fd, buf, n, (off_t)off) == (ssize_t)n;
}

static void note_section(const char *name, const Elf64_Shdr *sh, dm_elf_cuda_secs_t *s) {
  dm_elf_sec_t *d = !strcmp(name, DM_FATBIN_SECTION)      ? &s->fatbin
                    : !strcmp(name, DM_RELFATBIN_SECTION) ? &s->relfatbin
                                                          : NULL;
  if (!d || d->found) return;
  d->found = 1;
  d->alloc = !!(sh->sh_flags & SHF_ALLOC);
  d->addr = sh->sh_addr;
  d->size = sh->sh_type == SHT_NOBITS ? 0 : sh->sh_size;
  d->offset = sh->sh_offset;
}

int dm_elf_cuda_sections(int fd, dm_elf_cuda_secs_t *s, char *why, size_t whylen) {
  memset(s, 0, sizeof *s);
  Elf64_Ehdr eh;
  if (!read_at(fd, &eh, sizeof eh, 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
      eh.e_ident[EI_CLASS] != ELFCLASS64)
    return dm_fail(-EINVAL, why, whylen, "not a 64-bit ELF file");
  if (eh.e_shnum == 0) return 0;
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum)
    return dm_fail(-EINVAL, why, whylen, "ELF section table implausible");
  int rc = 0;
  char *names = NULL;
  Elf64_Shdr *sh = malloc((size_t)eh.e_shnum * sizeof *sh);
  if (!sh) return dm_fail(-ENOMEM, why, whylen, "out of memory");
  if (!read_at(fd, sh, (size_t)eh.e_shnum * sizeof *sh, eh.e_shoff)) {
    rc = dm_fail(-EINVAL, why, whylen, "ELF section table unreadable");
    goto out;
  }
  const Elf64_Shdr *st = &sh[eh.e_shstrndx];
  if (st->sh_size == 0 || st->sh_size > MAX_SHSTRTAB || !(names = malloc(st->sh_size + 1)) ||
      !read_at(fd, names, st->sh_size, st->sh_offset)) {
    rc = dm_fail(-EINVAL, why, whylen, "ELF section names unreadable");
    goto out;
  }
  names[st->sh_size] = 0;
  for (unsigned i = 0; i < eh.e_shnum; i++)
    if (sh[i].sh_name < st->sh_size) note_section(names + sh[i].sh_name, &sh[i], s);
out:
  free(names);
  free(sh);
  return rc;
}

typedef struct {
  uintptr_t addr;
  dm_elf_origin_t *o;
  int found;
} origin_find_t;

static int find_object(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  origin_find_t *f = arg;
  dm_elf_origin_t *o = f->o;
  int holds = 0;
  o->nloads = 0;
  o->bias = (uintptr_t)info->dlpi_addr;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *p = &info->dlpi_phdr[i];
    if (p->p_type != PT_LOAD || !(p->p_flags & PF_R)) continue;
    uintptr_t lo = o->bias + p->p_vaddr, hi = lo + p->p_memsz;
    if (o->nloads < (int)(sizeof o->lo / sizeof o->lo[0])) {
      o->lo[o->nloads] = lo;
      o->hi[o->nloads] = hi;
      o->nloads++;
    }
    holds |= f->addr >= lo && f->addr < hi;
  }
  if (!holds) return 0;
  const char *name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe";
  size_t n = strlen(name);
  if (n >= sizeof o->path) return 1; /* found, but unnameable: found stays 0 */
  memcpy(o->path, name, n + 1);
  f->found = 1;
  return 1;
}

int dm_elf_origin(const void *addr, dm_elf_origin_t *o) {
  memset(o, 0, sizeof *o);
  origin_find_t f = {(uintptr_t)addr, o, 0};
  dl_iterate_phdr(find_object, &f);
  return f.found;
}

int dm_elf_origin_maps(const dm_elf_origin_t *o, uintptr_t p, size_t n) {
  for (int i = 0; i < o->nloads; i++)
    if (p >= o->lo[i] && n <= o->hi[i] - o->lo[i] && p - o->lo[i] <= o->hi[i] - o->lo[i] - n) return 1;
  return 0;
}

int dm_relfatbin_of(const void *image, const void **sec, size_t *len, char *path, size_t pathlen, char *why,
                    size_t whylen) {
  dm_elf_origin_t o;
  if (!dm_elf_origin(image, &o)) return dm_fail(0, why, whylen, "the image is in no loaded file");
  snprintf(path, pathlen, "%s", o.path);
  int fd = open(o.path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return dm_fail(0, why, whylen, "%s: cannot open", o.path);
  dm_elf_cuda_secs_t s;
  char ewhy[160];
  int rc = dm_elf_cuda_sections(fd, &s, ewhy, sizeof ewhy);
  close(fd);
  if (rc < 0) return dm_fail(0, why, whylen, "%s: %s", o.path, ewhy);
  uintptr_t at = (uintptr_t)image - o.bias;
  if (!s.fatbin.found || at < s.fatbin.addr || at - s.fatbin.addr >= s.fatbin.size)
    return dm_fail(0, why, whylen, "%s: the image is not in its " DM_FATBIN_SECTION, o.path);
  if (!s.relfatbin.found || !s.relfatbin.size)
    return dm_fail(0, why, whylen, "%s: no " DM_RELFATBIN_SECTION " section", o.path);
  uintptr_t p = o.bias + (uintptr_t)s.relfatbin.addr;
  if (!s.relfatbin.alloc || s.relfatbin.size > DM_IMAGE_MAX ||
      !dm_elf_origin_maps(&o, p, (size_t)s.relfatbin.size))
    return dm_fail(0, why, whylen, "%s: " DM_RELFATBIN_SECTION " is not mapped", o.path);
  *sec = (const void *)p;
  *len = (size_t)s.relfatbin.size;
  return 1;
}
