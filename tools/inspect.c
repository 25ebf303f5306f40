/*
 * inspect.c — devmalloc-inspect: what device images an executable, shared
 * library, object, fatbin, cubin or PTX file carries, whether they call the
 * stock device malloc, whether devmalloc is linked in, and whether the shim's
 * load-time re-link can apply: from PTX, from the relocatable code an -rdc
 * file keeps (__nv_relfatbin, judged per device arch as the shim judges it:
 * relfatbin.h), or not at all, and why.
 *
 *   devmalloc-inspect [--arch SM] [--quiet] [--version] FILE...
 *
 * Exit status: 0 all files read; 1 a file was unreadable (the reason is
 * printed), larger than INSPECT_MAX_BYTES, truncated, not recognised or held
 * a corrupt fatbin; 2 usage (unknown option, malformed --arch). Files are
 * read with a bound (1 GiB, 64 MiB for devices and pipes), so /dev/zero
 * cannot make it read forever.
 * Locking: single-threaded program.
 */
#include "cubin_elf.h"
#include "decompress.h"
#include "fatbin.h"
#include "relfatbin.h"
#include "ptx_scan.h"
#include "relink_err.h"
#include "devmalloc.h"
#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <getopt.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Largest file read: a regular file (executables with device code run to
 * hundreds of MiB), anything else (a device, a pipe). */
#define INSPECT_MAX_BYTES ((size_t)1 << 30)
#define INSPECT_MAX_STREAM ((size_t)64 << 20)

static unsigned opt_arch; /* evaluate the re-link for this device (e.g. 90) */
static int opt_quiet;

/* Per-fatbin findings, folded into the verdict. */
typedef struct {
  int uses_stock, has_devmalloc, known;
  unsigned best_ptx, lowest_ptx, nptx, nelf;
  unsigned elf_arch[16];
  int nelf_arch;
  int errors;
} verdict_t;

/* The __nv_relfatbin section of the host ELF being shown, if it has one. */
static const unsigned char *g_rel;
static size_t g_rel_len;

typedef struct {
  unsigned modules, relinkable, relinkable_rdc, stock_no_ptx, devmalloc, no_malloc, errors;
  unsigned min_cc;
} summary_t;

static const char *yesno(int v) { return v ? "yes" : "no"; }

static void entry_line(const dm_fb_entry_t *e, verdict_t *v) {
  char comp[64], why[200];
  if (e->codec == DM_CODEC_NONE)
    snprintf(comp, sizeof comp, "uncompressed");
  else
    snprintf(comp, sizeof comp, "%s %u -> %llu B", dm_codec_name(e->codec), e->compressed_size,
             (unsigned long long)e->uncompressed_size);
  char arch[32];
  snprintf(arch, sizeof arch, "%s_%u", e->kind == DM_FB_KIND_PTX ? "compute" : "sm", e->arch);
  printf("    %-3s %-11s %8llu B  %-24s", dm_fb_kind_name(e->kind), arch, (unsigned long long)e->payload_size,
         comp);
  if (e->kind != DM_FB_KIND_PTX && e->kind != DM_FB_KIND_ELF) {
    printf(" (kind %u not inspected)\n", e->kind);
    return;
  }
  unsigned char *img;
  size_t n;
  if (dm_fb_entry_load(e, &img, &n, why, sizeof why) < 0) {
    printf(" ERROR: %s\n", why);
    v->errors++;
    return;
  }
  int stock, dm;
  if (e->kind == DM_FB_KIND_ELF) {
    dm_cubin_info_t ci;
    if (dm_cubin_inspect(img, n, &ci, why, sizeof why) < 0) {
      printf(" ERROR: %s\n", why);
      v->errors++;
      free(img);
      return;
    }
    stock = dm_cubin_uses_stock_malloc(&ci);
    dm = dm_cubin_has_devmalloc(&ci);
    v->nelf++;
    if (v->nelf_arch < (int)(sizeof v->elf_arch / sizeof v->elf_arch[0]))
      v->elf_arch[v->nelf_arch++] = e->arch;
    printf(" stock malloc: %-3s devmalloc: %-3s%s\n", yesno(stock), yesno(dm),
           ci.relocatable ? " (relocatable)" : "");
  } else {
    dm_ptx_info_t pi;
    dm_ptx_scan((const char *)img, n, &pi);
    stock = dm_ptx_uses_stock_malloc(&pi);
    dm = dm_ptx_has_devmalloc(&pi);
    v->nptx++;
    if (!v->best_ptx || e->arch > v->best_ptx) v->best_ptx = e->arch;
    if (!v->lowest_ptx || e->arch < v->lowest_ptx) v->lowest_ptx = e->arch;
    printf(" stock malloc: %-3s devmalloc: %-3s (PTX ISA %u.%u)\n", yesno(stock), yesno(dm), pi.version_major,
           pi.version_minor);
  }
  v->known = 1;
  v->uses_stock |= stock;
  v->has_devmalloc |= dm;
  free(img);
}

/* One device arch of an -rdc image: how the shim re-links it there. */
static int rdc_arch_line(unsigned cc) {
  dm_rel_plan_t p;
  char why[200];
  printf("       sm_%u: ", cc);
  if (dm_rel_plan(g_rel, g_rel_len, cc, &p, why, sizeof why) < 0) {
    printf("keeps stock malloc: __nv_relfatbin unreadable: %s\n", why);
    return 0;
  }
  int ok = 0;
  if (p.lto_only)
    printf("keeps stock malloc: %u units are LTO IR only (-dlto), which the driver's "
           "linker cannot link\n",
           p.lto_only);
  else if (p.unusable)
    printf("keeps stock malloc: %u units have neither sm_%u relocatable code nor PTX <= "
           "compute_%u\n",
           p.unusable, cc, cc);
  else if (!p.n)
    printf("keeps stock malloc: no relocatable units\n");
  else {
    printf("re-linked from relocatable code: %u units (%u as sm_%u SASS, %u from PTX)%s\n", p.n, p.nsass, cc,
           p.nptx, p.needs_devrt ? ", with libcudadevrt.a" : "");
    ok = 1;
  }
  dm_rel_plan_free(&p);
  return ok;
}

static void rdc_verdict(const verdict_t *v, summary_t *s) {
  printf("calls stock malloc, no PTX: an -rdc image; the shim re-links it from the "
         "relocatable code in __nv_relfatbin (if that is what it was linked from):\n");
  int ok = 0;
  if (opt_arch)
    ok = rdc_arch_line(opt_arch);
  else
    for (int i = 0; i < v->nelf_arch; i++) ok |= rdc_arch_line(v->elf_arch[i]);
  if (ok)
    s->relinkable_rdc++;
  else
    s->stock_no_ptx++;
}

static void verdict_line(const verdict_t *v, int loaded, summary_t *s) {
  printf("    => ");
  if (v->errors) {
    printf("corrupt or unreadable: the shim keeps the original image\n");
    s->errors++;
    return;
  }
  if (!loaded) {
    printf("relocatable device code (used by the device link, not loaded)\n");
    return;
  }
  s->modules++;
  if (v->uses_stock && !v->has_devmalloc && !v->nptx && g_rel) {
    rdc_verdict(v, s);
    return;
  }
  if (v->has_devmalloc) {
    printf("devmalloc already linked in: served by devmalloc, no re-link needed\n");
    s->devmalloc++;
  } else if (!v->uses_stock) {
    printf("does not call device malloc/free: nothing to re-link\n");
    s->no_malloc++;
  } else if (!v->nptx) {
    printf("calls stock malloc but carries no PTX: re-link cannot apply "
           "(rebuild with PTX, e.g. -arch=sm_XX, or link devmalloc with -rdc)\n");
    s->stock_no_ptx++;
  } else if (opt_arch && v->lowest_ptx > opt_arch) {
    printf("calls stock malloc; its PTX (compute_%u) is too new for sm_%u: "
           "re-link cannot apply there\n",
           v->lowest_ptx, opt_arch);
    s->stock_no_ptx++;
  } else {
    printf("calls stock malloc; re-link applies on devices of compute capability "
           ">= %u.%u (compute_%u PTX)\n",
           v->lowest_ptx / 10, v->lowest_ptx % 10, opt_arch ? v->best_ptx : v->lowest_ptx);
    s->relinkable++;
    if (!s->min_cc || v->lowest_ptx < s->min_cc) s->min_cc = v->lowest_ptx;
  }
}

static int show_fatbin(const dm_fatbin_t *fb, const char *where, int loaded, summary_t *s) {
  printf("  fatbin %s: %zu bytes\n", where, fb->size);
  verdict_t v = {0};
  size_t cur = 0;
  dm_fb_entry_t e;
  char why[200];
  int rc;
  while ((rc = dm_fatbin_next(fb, &cur, &e, why, sizeof why)) == 1) entry_line(&e, &v);
  if (rc < 0) {
    printf("    ERROR: %s\n", why);
    v.errors++;
  }
  verdict_line(&v, loaded, s);
  return v.errors ? -1 : 0;
}

static int show_section(const unsigned char *sec, size_t len, const char *name, summary_t *s) {
  int loaded = strcmp(name, "__nv_relfatbin") != 0;
  size_t off = 0, prev;
  dm_fatbin_t fb;
  char why[200], where[96];
  int rc, bad = 0, n = 0;
  printf(" %s %s (%zu bytes)%s\n", name[0] == '(' ? "file" : "section", name, len,
         loaded ? "" : ": relocatable device code kept for device links");
  for (;;) {
    prev = off;
    rc = dm_fatbin_next_in_section(sec, len, &off, &fb, why, sizeof why);
    if (rc <= 0) break;
    snprintf(where, sizeof where, "#%d at +0x%zx", n++, (size_t)(fb.data - sec));
    if (show_fatbin(&fb, where, loaded, s) < 0) bad = 1;
  }
  if (rc < 0) {
    printf("  ERROR near +0x%zx: %s\n", prev, why);
    s->errors++;
    bad = 1;
  }
  if (n == 0 && rc == 0) printf("  (no fatbin found)\n");
  return bad ? -1 : 0;
}

static int show_host_elf(unsigned char *buf, size_t len, summary_t *s) {
  Elf *e = elf_memory((char *)buf, len);
  GElf_Ehdr eh;
  size_t shstr;
  if (!e || !gelf_getehdr(e, &eh) || elf_getshdrstrndx(e, &shstr) != 0) {
    fprintf(stderr, "devmalloc-inspect: bad ELF: %s\n", elf_errmsg(-1));
    if (e) elf_end(e);
    return -1;
  }
  uint64_t shend = eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize;
  uint64_t phend = eh.e_phoff + (uint64_t)eh.e_phnum * eh.e_phentsize;
  if (shend > len || phend > len) {
    fprintf(stderr,
            "devmalloc-inspect: truncated ELF: its headers end at byte %llu, "
            "the file has %zu\n",
            (unsigned long long)(shend > phend ? shend : phend), len);
    elf_end(e);
    return -1;
  }
  printf(" host ELF, %s, machine %u\n",
         eh.e_type == ET_EXEC  ? "executable"
         : eh.e_type == ET_DYN ? "shared object / PIE"
         : eh.e_type == ET_REL ? "relocatable object"
                               : "other type",
         eh.e_machine);
  int bad = 0, found = 0;
  Elf_Scn *scn = NULL;
  g_rel = NULL;
  g_rel_len = 0;
  while ((scn = elf_nextscn(e, scn)) != NULL) { /* __nv_relfatbin first: the verdicts use it */
    GElf_Shdr sh;
    const char *name;
    if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS && sh.sh_offset <= len &&
        sh.sh_size <= len - sh.sh_offset && (name = elf_strptr(e, shstr, sh.sh_name)) &&
        !strcmp(name, DM_RELFATBIN_SECTION)) {
      g_rel = buf + sh.sh_offset;
      g_rel_len = sh.sh_size;
    }
  }
  scn = NULL;
  while ((scn = elf_nextscn(e, scn)) != NULL) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    if (sh.sh_type != SHT_NOBITS && sh.sh_size && sh.sh_offset + sh.sh_size > len) {
      fprintf(stderr,
              "devmalloc-inspect: truncated ELF: a section ends at byte %llu, "
              "the file has %zu\n",
              (unsigned long long)(sh.sh_offset + sh.sh_size), len);
      elf_end(e);
      return -1;
    }
    const char *name = elf_strptr(e, shstr, sh.sh_name);
    if (!name || (strcmp(name, ".nv_fatbin") && strcmp(name, "__nv_relfatbin"))) continue;
    found = 1;
    if (sh.sh_type == SHT_NOBITS || sh.sh_offset > len || sh.sh_size > len - sh.sh_offset) {
      printf(" section %s: out of the file's bounds\n", name);
      s->errors++;
      bad = 1;
      continue;
    }
    if (show_section(buf + sh.sh_offset, sh.sh_size, name, s) < 0) bad = 1;
  }
  if (!found) printf(" no device code (.nv_fatbin / __nv_relfatbin absent)\n");
  g_rel = NULL;
  elf_end(e);
  return bad ? -1 : 0;
}

static int show_cubin(const unsigned char *buf, size_t len, summary_t *s) {
  dm_cubin_info_t ci;
  char why[200];
  if (dm_cubin_inspect(buf, len, &ci, why, sizeof why) < 0) {
    fprintf(stderr, "devmalloc-inspect: %s\n", why);
    return -1;
  }
  printf(" cubin sm_%u%s: stock malloc: %s, devmalloc: %s\n", ci.sm, ci.relocatable ? " (relocatable)" : "",
         yesno(dm_cubin_uses_stock_malloc(&ci)), yesno(dm_cubin_has_devmalloc(&ci)));
  verdict_t v = {.known = 1,
                 .uses_stock = dm_cubin_uses_stock_malloc(&ci),
                 .has_devmalloc = dm_cubin_has_devmalloc(&ci),
                 .nelf = 1};
  verdict_line(&v, 1, s);
  return 0;
}

static int show_ptx(const unsigned char *buf, size_t len, summary_t *s) {
  dm_ptx_info_t pi;
  dm_ptx_scan((const char *)buf, len, &pi);
  printf(" PTX ISA %u.%u, target sm_%u: stock malloc: %s, devmalloc: %s\n", pi.version_major,
         pi.version_minor, pi.target_sm, yesno(dm_ptx_uses_stock_malloc(&pi)),
         yesno(dm_ptx_has_devmalloc(&pi)));
  verdict_t v = {.known = 1,
                 .uses_stock = dm_ptx_uses_stock_malloc(&pi),
                 .has_devmalloc = dm_ptx_has_devmalloc(&pi),
                 .nptx = 1,
                 .best_ptx = pi.target_sm,
                 .lowest_ptx = pi.target_sm};
  verdict_line(&v, 1, s);
  return 0;
}

/* Whole file, at most INSPECT_MAX_BYTES; NULL with *why set on failure. */
static unsigned char *read_file(const char *path, size_t *len, char *why, size_t whylen) {
  FILE *f = fopen(path, "rb");
  struct stat st;
  if (!f || fstat(fileno(f), &st) != 0) {
    snprintf(why, whylen, "cannot read: %s", strerror(errno));
    if (f) fclose(f);
    return NULL;
  }
  if (S_ISDIR(st.st_mode)) {
    snprintf(why, whylen, "cannot read: %s", strerror(EISDIR));
    fclose(f);
    return NULL;
  }
  size_t max = S_ISREG(st.st_mode) ? INSPECT_MAX_BYTES : INSPECT_MAX_STREAM;
  unsigned char *buf = NULL;
  size_t cap = 0, n = 0;
  for (;;) {
    if (n == cap) {
      if (cap >= max) {
        snprintf(why, whylen, "larger than %zu bytes%s: not read further", max,
                 S_ISREG(st.st_mode) ? "" : " (not a regular file)");
        free(buf);
        fclose(f);
        return NULL;
      }
      cap = cap ? cap * 2 : 1 << 16;
      if (cap > max) cap = max;
      unsigned char *nb = realloc(buf, cap + 1);
      if (!nb) {
        snprintf(why, whylen, "cannot read: out of memory");
        free(buf);
        fclose(f);
        return NULL;
      }
      buf = nb;
    }
    size_t r = fread(buf + n, 1, cap - n, f);
    n += r;
    if (r == 0) break;
  }
  if (ferror(f)) {
    snprintf(why, whylen, "cannot read: %s", strerror(errno ? errno : EIO));
    free(buf);
    fclose(f);
    return NULL;
  }
  fclose(f);
  buf[n] = 0;
  *len = n;
  return buf;
}

/* PTX text: printable, and the .version and .target directives present. */
static int looks_like_ptx(const unsigned char *buf, size_t len) {
  for (size_t i = 0; i < len && buf[i]; i++)
    if (!isprint(buf[i]) && !isspace(buf[i])) return 0;
  return strstr((const char *)buf, ".version") && strstr((const char *)buf, ".target");
}

static int inspect_file(const char *path) {
  size_t len;
  char why[300];
  unsigned char *buf = read_file(path, &len, why, sizeof why);
  if (!buf) {
    fprintf(stderr, "devmalloc-inspect: %s: %s\n", path, why);
    return -1;
  }
  if (len == 0) {
    fprintf(stderr, "devmalloc-inspect: %s: empty file\n", path);
    free(buf);
    return -1;
  }
  summary_t s = {0};
  printf("%s:\n", path);
  int rc;
  dm_image_kind_t k = dm_image_kind(buf, len);
  if (k == DM_IMG_ELF && len >= sizeof(Elf64_Ehdr) && ((Elf64_Ehdr *)buf)->e_machine == DM_EM_CUDA) {
    rc = show_cubin(buf, len, &s);
  } else if (k == DM_IMG_ELF) {
    rc = show_host_elf(buf, len, &s);
  } else if (k == DM_IMG_FATBIN) {
    rc = show_section(buf, len, "(fatbin)", &s);
  } else if (k == DM_IMG_PTX && looks_like_ptx(buf, len)) {
    rc = show_ptx(buf, len, &s);
  } else {
    fprintf(stderr, "devmalloc-inspect: %s: not an ELF file, fatbin, cubin or PTX\n", path);
    rc = -1;
  }
  if (rc == 0 && !opt_quiet) {
    printf(" summary: %u loaded module(s): %u re-linkable", s.modules, s.relinkable);
    if (s.relinkable) printf(" (devices >= sm_%u)", s.min_cc);
    if (s.relinkable_rdc) printf(", %u re-linkable from relocatable code", s.relinkable_rdc);
    printf(", %u stock malloc without PTX, %u with devmalloc, %u without malloc", s.stock_no_ptx, s.devmalloc,
           s.no_malloc);
    if (s.errors) printf(", %u unreadable", s.errors);
    printf("\n");
  }
  free(buf);
  return rc;
}

static void usage(FILE *f) {
  fprintf(f, "usage: devmalloc-inspect [--arch SM] [--quiet] [--version] FILE...\n"
             "  List the device images in an executable, shared library, object,\n"
             "  fatbin, cubin or PTX file; whether they call the stock device malloc,\n"
             "  carry devmalloc, and whether the shim's load-time re-link applies.\n"
             "  --arch SM     judge the re-link for a device of that arch (90, sm_90)\n"
             "  --quiet, -q   no summary line\n"
             "  --version     print the version\n"
             "Exit status: 0 read, 1 a file unreadable/truncated/unrecognised, 2 usage.\n");
}

/* "90", "sm_90", "compute_90", "sm_90a" -> 90; 0 when malformed. */
static unsigned parse_arch(const char *a) {
  if (!strncmp(a, "sm_", 3))
    a += 3;
  else if (!strncmp(a, "compute_", 8))
    a += 8;
  if (!isdigit((unsigned char)a[0])) return 0;
  char *end;
  unsigned long v = strtoul(a, &end, 10);
  if ((*end && strcmp(end, "a") && strcmp(end, "f")) || v < 30 || v > 199) return 0;
  return (unsigned)v;
}

int main(int argc, char **argv) {
  static const struct option longopts[] = {{"arch", required_argument, NULL, 'a'},
                                           {"quiet", no_argument, NULL, 'q'},
                                           {"help", no_argument, NULL, 'h'},
                                           {"version", no_argument, NULL, 'V'},
                                           {NULL, 0, NULL, 0}};
  int c, bad = 0;
  while ((c = getopt_long(argc, argv, "a:qhV", longopts, NULL)) != -1) {
    switch (c) {
    case 'a':
      if (!(opt_arch = parse_arch(optarg))) {
        fprintf(stderr,
                "devmalloc-inspect: invalid --arch '%s': expected a compute "
                "capability such as 90, sm_90 or compute_90\n",
                optarg);
        return 2;
      }
      break;
    case 'q': opt_quiet = 1; break;
    case 'h': usage(stdout); return 0;
    case 'V': printf("devmalloc-inspect %s\n", DEVMALLOC_VERSION_STRING); return 0;
    default: usage(stderr); return 2;
    }
  }
  if (optind >= argc) {
    usage(stderr);
    return 2;
  }
  if (elf_version(EV_CURRENT) == EV_NONE) {
    fprintf(stderr, "devmalloc-inspect: libelf too old\n");
    return 1;
  }
  for (int i = optind; i < argc; i++)
    if (inspect_file(argv[i]) < 0) bad = 1;
  return bad;
}
