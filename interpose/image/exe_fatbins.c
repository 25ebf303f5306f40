/*
 * exe_fatbins.c — the fatbins the program's executable registers with the
 * CUDA runtime, found before the runtime loads them (the shim reads their
 * re-linked images from the cache ahead: driver/jit_ahead.c).
 *
 * nvcc puts a registration wrapper per translation unit with device code in
 * the executable's .nvFatBinSegment section ({magic 0x466243B1, version,
 * fatbin pointer, file names}: 24 bytes each); the runtime later hands those
 * fatbin pointers to cuLibraryLoadData. Section headers are not mapped, so
 * they are read from /proc/self/exe; the section's bytes are read in
 * memory, where the pointers are relocated. Everything read is untrusted:
 * the file must be the program that is mapped (its entry point, relocated,
 * is the one the kernel started), the section and each fatbin header must
 * lie in the program's loaded segments, and every count is capped. Any
 * doubt gives fewer fatbins, never a read outside them.
 *
 * Only the executable: shared libraries (cuBLAS, ...) carry hundreds of
 * fatbins that do not call malloc, and a load re-links those as before.
 *
 * Locking: none (reads the caller's process image).
 */
#include "image.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#define WRAPPER_MAGIC 0x466243B1u
#define WRAPPER_BYTES 24u
#define MAX_SECTIONS 4096u
#define MAX_SHSTRTAB (1u << 20)
#define MAX_LOADS 16

typedef struct {
  uintptr_t bias;
  uintptr_t lo[MAX_LOADS], hi[MAX_LOADS]; /* readable PT_LOAD ranges */
  int nloads, found;
} exe_map_t;

/* The main program is the first object dl_iterate_phdr reports. */
static int first_object(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  exe_map_t *m = arg;
  m->bias = (uintptr_t)info->dlpi_addr;
  for (int i = 0; i < info->dlpi_phnum && m->nloads < MAX_LOADS; i++) {
    const ElfW(Phdr) *p = &info->dlpi_phdr[i];
    if (p->p_type != PT_LOAD || !(p->p_flags & PF_R)) continue;
    m->lo[m->nloads] = m->bias + p->p_vaddr;
    m->hi[m->nloads] = m->bias + p->p_vaddr + p->p_memsz;
    m->nloads++;
  }
  m->found = 1;
  return 1;
}

static int mapped(const exe_map_t *m, uintptr_t p, size_t n) {
  for (int i = 0; i < m->nloads; i++)
    if (p >= m->lo[i] && n <= m->hi[i] - m->lo[i] && p - m->lo[i] <= m->hi[i] - m->lo[i] - n) return 1;
  return 0;
}

static int read_at(int fd, void *buf, size_t n, uint64_t off) {
  return pread(fd, buf, n, (off_t)off) == (ssize_t)n;
}

/* .nvFatBinSegment's address and size in the running program; 0 if none. */
static int find_segment(const exe_map_t *m, uintptr_t *addr, size_t *size) {
  int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  int ok = 0;
  Elf64_Ehdr eh;
  Elf64_Shdr *sh = NULL;
  char *names = NULL;
  if (!read_at(fd, &eh, sizeof eh, 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 ||
      eh.e_shnum > MAX_SECTIONS || eh.e_shstrndx >= eh.e_shnum ||
      getauxval(AT_ENTRY) != m->bias + eh.e_entry) /* not the program that runs (ld.so ./app) */
    goto out;
  if (!(sh = malloc((size_t)eh.e_shnum * sizeof *sh)) ||
      !read_at(fd, sh, (size_t)eh.e_shnum * sizeof *sh, eh.e_shoff))
    goto out;
  const Elf64_Shdr *st = &sh[eh.e_shstrndx];
  if (st->sh_size == 0 || st->sh_size > MAX_SHSTRTAB || !(names = malloc(st->sh_size + 1)) ||
      !read_at(fd, names, st->sh_size, st->sh_offset))
    goto out;
  names[st->sh_size] = 0;
  for (unsigned i = 0; i < eh.e_shnum; i++) {
    if (sh[i].sh_name >= st->sh_size || strcmp(names + sh[i].sh_name, ".nvFatBinSegment")) continue;
    if (!(sh[i].sh_flags & SHF_ALLOC) || sh[i].sh_size % WRAPPER_BYTES) break;
    *addr = m->bias + sh[i].sh_addr;
    *size = sh[i].sh_size;
    ok = mapped(m, *addr, *size);
    break;
  }
out:
  free(names);
  free(sh);
  close(fd);
  return ok;
}

size_t dm_exe_fatbins(const void **out, size_t max) {
  exe_map_t m = {0};
  uintptr_t seg;
  size_t size, n = 0;
  dl_iterate_phdr(first_object, &m);
  if (!m.found || !find_segment(&m, &seg, &size)) return 0;
  for (size_t off = 0; off + WRAPPER_BYTES <= size && n < max; off += WRAPPER_BYTES) {
    uint32_t magic;
    uintptr_t fatbin;
    memcpy(&magic, (const char *)seg + off, 4);
    memcpy(&fatbin, (const char *)seg + off + 8, sizeof fatbin);
    if (magic != WRAPPER_MAGIC || !mapped(&m, fatbin, 16)) continue;
    out[n++] = (const void *)fatbin;
  }
  return n;
}
