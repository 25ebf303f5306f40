/*
 * image_bound.c — the extent of a module image the application passed
 * without a size (cuModuleLoadData, cuModuleLoadFatBinary, cuLibraryLoadData).
 *
 * Such an image says its own size: a fatbin in its header, an ELF through its
 * header and section tables, PTX by its terminating NUL, a registration
 * wrapper through the fatbin it points to. Those sizes are untrusted: every
 * sum is checked for overflow, every size is capped at DM_IMAGE_MAX, and the
 * memory is probed before it is read (dm_readable_prefix: the kernel copies
 * one byte per page, so an unmapped or PROT_NONE page is an error code, not
 * a SIGSEGV). Anything malformed gets NULL and the caller hands the original
 * pointer to the driver, which reports its own error.
 *
 * Locking: none (pure functions over the caller's memory).
 */
#include "image.h"
#include "relink_err.h"
#include "bytes.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define WRAPPER_MAGIC 0x466243B1u
#define FATBIN_MAGIC 0xBA55ED50u
#define FATBIN_HDR_MAX 4096u
#define ELF_HDR 64u
#define ELF_SHDR 64u
#define PROBE_PAGES 64 /* pages probed per system call */
#define PTX_WINDOW ((size_t)PROBE_PAGES * 4096)

/* One byte of each page in [b, b+n) through the pipe fallback: write() reports
 * EFAULT for memory it cannot read. */
static size_t probe_pipe(const unsigned char *b, size_t n, size_t page) {
  int fd[2];
  if (pipe2(fd, O_CLOEXEC | O_NONBLOCK) < 0) return 0;
  size_t ok = 0;
  char sink;
  while (ok < n) {
    if (write(fd[1], b + ok, 1) != 1) break;
    if (read(fd[0], &sink, 1) != 1) break;
    size_t step = page - ((uintptr_t)(b + ok) & (page - 1));
    ok = step > n - ok ? n : ok + step;
  }
  close(fd[0]);
  close(fd[1]);
  return ok;
}

size_t dm_readable_prefix(const void *p, size_t n) {
  const unsigned char *b = p;
  size_t page = (size_t)sysconf(_SC_PAGESIZE), ok = 0;
  if (!b || !n) return 0;
  while (ok < n) {
    struct iovec remote[PROBE_PAGES], local;
    char sink[PROBE_PAGES];
    size_t starts[PROBE_PAGES], k = 0, at = ok;
    while (k < PROBE_PAGES && at < n) {
      starts[k] = at;
      remote[k].iov_base = (void *)(b + at);
      remote[k].iov_len = 1;
      k++;
      size_t step = page - ((uintptr_t)(b + at) & (page - 1));
      at = step > n - at ? n : at + step;
    }
    local.iov_base = sink;
    local.iov_len = k;
    ssize_t got = process_vm_readv(getpid(), &local, 1, remote, k, 0);
    if (got < 0 && (errno == ENOSYS || errno == EPERM)) return ok + probe_pipe(b + ok, n - ok, page);
    if (got < 0) return ok;
    if ((size_t)got < k) return starts[got];
    ok = at;
  }
  return n;
}

static int readable(const void *p, size_t n) { return dm_readable_prefix(p, n) == n; }

static size_t max_end(size_t a, uint64_t b) { return b > a ? (size_t)b : a; }

/* End of an ELF64 image: its header, program and section header tables and
 * every section with file contents. 0 if any of them is malformed. */
static size_t elf_extent(const unsigned char *p) {
  if (!readable(p, ELF_HDR) || p[4] != 2) return 0; /* ELFCLASS64 only */
  uint64_t phoff = rd64(p + 0x20), shoff = rd64(p + 0x28);
  uint16_t phentsize = rd16(p + 0x36), phnum = rd16(p + 0x38);
  uint16_t shentsize = rd16(p + 0x3a), shnum = rd16(p + 0x3c);
  size_t end = ELF_HDR;
  if (phnum) {
    uint64_t tab = (uint64_t)phentsize * phnum;
    if (phoff > DM_IMAGE_MAX || tab > DM_IMAGE_MAX - phoff) return 0;
    end = max_end(end, phoff + tab);
  }
  if (shnum) {
    if (shentsize != ELF_SHDR) return 0;
    uint64_t tab = (uint64_t)ELF_SHDR * shnum;
    if (shoff > DM_IMAGE_MAX || tab > DM_IMAGE_MAX - shoff) return 0;
    if (!readable(p, (size_t)(shoff + tab))) return 0;
    end = max_end(end, shoff + tab);
    for (uint16_t i = 0; i < shnum; i++) {
      const unsigned char *sh = p + shoff + (uint64_t)i * ELF_SHDR;
      uint32_t type = rd32(sh + 4);
      uint64_t off = rd64(sh + 0x18), size = rd64(sh + 0x20);
      /* SHT_NOBITS, and CUDA's own NOBITS type (SHT_LOPROC + 7, .nv.global) */
      if (type == 8 || type == 0x70000007u) continue;
      if (off > DM_IMAGE_MAX || size > DM_IMAGE_MAX - off) return 0;
      end = max_end(end, off + size);
    }
  }
  return readable(p, end) ? end : 0;
}

/* A fatbin's header and entries, as its header declares them. */
static size_t fatbin_extent(const unsigned char *p) {
  if (!readable(p, 16)) return 0;
  uint16_t hs = rd16(p + 6);
  uint64_t body = rd64(p + 8);
  if (hs < 16 || hs > FATBIN_HDR_MAX || body > DM_IMAGE_MAX - hs) return 0;
  size_t n = hs + (size_t)body;
  return readable(p, n) ? n : 0;
}

/* PTX text up to and including its NUL; 0 when no NUL comes before an
 * unreadable page or DM_IMAGE_MAX. */
static size_t text_extent(const unsigned char *p) {
  size_t off = 0;
  while (off < DM_IMAGE_MAX) {
    size_t want = DM_IMAGE_MAX - off < PTX_WINDOW ? DM_IMAGE_MAX - off : PTX_WINDOW;
    size_t got = dm_readable_prefix(p + off, want);
    const unsigned char *z = memchr(p + off, 0, got);
    if (z) return (size_t)(z - p) + 1;
    if (got < want) return 0;
    off += got;
  }
  return 0;
}

const void *dm_image_bound(const void *image, size_t *len) {
  const unsigned char *p = image;
  *len = 0;
  if (!p || !readable(p, 4)) return NULL;
  if (rd32(p) == WRAPPER_MAGIC) {
    if (!readable(p, 16)) return NULL;
    memcpy(&p, p + 8, sizeof p);
    if (!p || !readable(p, 4) || rd32(p) != FATBIN_MAGIC) return NULL;
  }
  size_t n = 0;
  if (rd32(p) == FATBIN_MAGIC)
    n = fatbin_extent(p);
  else if (!memcmp(p, "\177ELF", 4))
    n = elf_extent(p);
  else if (p[0] == '.' || p[0] == '/' || p[0] == '\n' || p[0] == ' ' || p[0] == '\t' || p[0] == '\r')
    n = text_extent(p);
  if (!n) return NULL;
  *len = n;
  return p;
}
