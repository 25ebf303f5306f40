/*
 * relink.c — load-time re-link of unmodified modules with devmalloc
 * (implements relink.h).
 *
 * For an image handed to a load call: find its fatbin (through the
 * registration wrapper if need be), decide from the ELF entries' symbol
 * tables (or, with no ELF, from the PTX declarations) whether it calls the
 * stock device allocator and is not linked with devmalloc yet, pick the PTX
 * entry with the highest arch <= the current device's compute capability,
 * decompress it, and JIT-link it with devmalloc's PTX (embedded in the shim by
 * devmalloc_ptx.S). Linked images are kept in the on-disk cache (cache.h).
 * Every refusal returns 0 with one line in `why`; the original image is then
 * loaded unchanged, so nothing is lost.
 *
 * Options (DEVMALLOC_JIT auto|off|force, DEVMALLOC_CACHE_DIR a path or "off",
 * DEVMALLOC_VERBOSE) are read once by relink_opts_read() from dm_options()
 * (options/options.h); messages go through dm_log (options/log.h).
 * At DEVMALLOC_VERBOSE >= 1 each successful re-link prints one line
 * ("devmalloc: jit: ..."); refusals are printed by the shim from `why`.
 * Cache hits and misses go to the event function the shim sets
 * (dm_relink_set_events), when one is set.
 *
 * Errors: relink.h's 1/0 + why. Locking: options, the cache handle and the
 * hash of devmalloc's PTX are set up once under pthread_once and read-only
 * afterwards; a re-link holds no lock while it JIT-links.
 *
 * A module whose ELF entry already said it calls the stock allocator is
 * looked up in the cache before its PTX is scanned: an entry exists for that
 * PTX only if an earlier scan of that same text (it is in the key) found no
 * devmalloc in it, so the scan would say the same and is skipped
 * (docs/decisions.md, "The scan before the cache").
 */
#include "relink.h"
#include "relink_int.h"
#include "cache.h"
#include "image/cubin_elf.h"
#include "image/decompress.h"
#include "image/fatbin.h"
#include "jit_link.h"
#include "ahead.h"
#include "observe/obs_event.h"
#include "options/log.h"
#include "options/options.h"
#include "image/ptx_scan.h"
#include "image/relink_err.h"
#include "ptx_inline.h"
#include "devmalloc.h"
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static relink_opts_t opts;
static dm_cache_t *cache;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static _Atomic(dm_relink_event_fn) events;

void dm_relink_set_events(dm_relink_event_fn fn) { events = fn; }

const relink_opts_t *dm_relink_opts(void) { return &opts; }

void dm_relink_event(int kind, const char *label) {
  dm_relink_event_fn fn = events;
  if (fn) fn(kind, label);
}

/* DEVMALLOC_CACHE_DIR: surrounding blanks trimmed; "off" (any case) turns the
 * cache off; anything else must be an absolute path shorter than PATH_MAX,
 * or the cache is off with a warning (a relative path would land in the
 * application's working directory, a cut one in another directory). */
static void cache_dir_option(const char *d, char *out, size_t outlen) {
  out[0] = 0;
  while (*d == ' ' || *d == '\t' || *d == '\n' || *d == '\r') d++;
  size_t n = strlen(d);
  while (n && (d[n - 1] == ' ' || d[n - 1] == '\t' || d[n - 1] == '\n' || d[n - 1] == '\r')) n--;
  if (n == 3 && !strncasecmp(d, "off", 3)) return;
  if (!n || d[0] != '/')
    dm_log(DM_LOG_WARN,
           "warning: DEVMALLOC_CACHE_DIR=\"%.*s\" is not an absolute path: JIT cache "
           "disabled",
           (int)(n < 256 ? n : 256), d);
  else if (n >= outlen)
    dm_log(DM_LOG_WARN,
           "warning: DEVMALLOC_CACHE_DIR is %zu bytes long (limit %zu): JIT cache "
           "disabled",
           n, outlen - 1);
  else {
    memcpy(out, d, n);
    out[n] = 0;
  }
}

/* A CUDA tool (Nsight Compute, compute-sanitizer, Nsight Systems) is
 * attached to the process: the driver loads it from CUDA_INJECTION64_PATH,
 * which a tool may clear once loaded, so its libraries loaded in the process
 * say so too ("...injection..." or "...sanitizer..." in the name). With free
 * written into the application's code, the image's first cuLibraryGetGlobal
 * under Nsight Compute and compute-sanitizer ended in a crash inside the
 * tool's library (H200, driver 580, Nsight Compute 2025.3.1); with the calls
 * as calls it did not. */
static int names_tool(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  (void)data;
  const char *n = info->dlpi_name;
  return n && (strcasestr(n, "injection") != NULL || strcasestr(n, "sanitizer") != NULL);
}
static int cuda_tool_attached(void) {
  const char *v = secure_getenv("CUDA_INJECTION64_PATH");
  return (v && *v) || dl_iterate_phdr(names_tool, NULL) != 0;
}

/* The one place options are read. */
static void relink_opts_read(relink_opts_t *o) {
  const dm_options_t *so = dm_options();
  o->jit = so->jit == DM_JIT_OFF ? JIT_OFF : so->jit == DM_JIT_FORCE ? JIT_FORCE : JIT_AUTO;
  o->verbose = so->verbose;
  o->sass = so->jit_sass;
  o->inline_calls = so->jit_inline && !cuda_tool_attached();
  if (so->jit_inline && !o->inline_calls)
    dm_log(DM_LOG_WARN, "warning: jit: DEVMALLOC_JIT_INLINE=1 not applied: a CUDA tool is attached to "
                        "the process; free's calls are linked as calls (docs/options.md)");
  o->cudadevrt[0] = 0;
  if (so->cudadevrt && so->cudadevrt[0] == '/' && strlen(so->cudadevrt) < sizeof o->cudadevrt)
    strcpy(o->cudadevrt, so->cudadevrt);
  const char *d = so->cache_dir;
  o->cache_dir[0] = 0;
  if (d && *d)
    cache_dir_option(d, o->cache_dir, sizeof o->cache_dir);
  else
    dm_cache_default_dir(o->cache_dir, sizeof o->cache_dir, NULL, 0);
}

static void relink_init(void) {
  relink_opts_read(&opts);
  if (opts.jit != JIT_OFF && opts.cache_dir[0]) {
    char why[PATH_MAX + 128];
    if (dm_cache_open(opts.cache_dir, &cache, why, sizeof why) < 0)
      dm_log(DM_LOG_WARN, "warning: JIT cache disabled: %s", why);
  }
}

/* What the module says about device malloc, from ELF entries or PTX. */
typedef struct {
  int have; /* 1: some source of truth was read */
  int uses_stock;
  int has_devmalloc;
  const char *source; /* "ELF symbols" / "PTX declarations" */
} alloc_use_t;

typedef struct {
  dm_fb_entry_t ptx; /* best PTX entry */
  int have_ptx;
  unsigned ptx_archs_seen, lowest_ptx_arch;
  dm_fb_entry_t elf; /* ELF entry to inspect: device arch, else highest */
  int have_elf;
  unsigned nentries;
} pick_t;

static int pick_entries(const dm_fatbin_t *fb, unsigned cc, pick_t *pk, char *why, size_t whylen) {
  memset(pk, 0, sizeof *pk);
  size_t cur = 0;
  dm_fb_entry_t e;
  int rc;
  while ((rc = dm_fatbin_next(fb, &cur, &e, why, whylen)) == 1) {
    pk->nentries++;
    if (e.kind == DM_FB_KIND_PTX) {
      pk->ptx_archs_seen++;
      if (!pk->lowest_ptx_arch || e.arch < pk->lowest_ptx_arch) pk->lowest_ptx_arch = e.arch;
      if (e.arch <= cc && (!pk->have_ptx || e.arch > pk->ptx.arch)) {
        pk->ptx = e;
        pk->have_ptx = 1;
      }
    } else if (e.kind == DM_FB_KIND_ELF) {
      int better = !pk->have_elf || (pk->elf.arch != cc && (e.arch == cc || e.arch > pk->elf.arch));
      if (better) {
        pk->elf = e;
        pk->have_elf = 1;
      }
    }
  }
  return rc;
}

/* The ELF entry's use of the allocator; its loaded bytes stay in *img, *n
 * (the caller frees them: an -rdc image's re-link reads them again). */
static int inspect_elf_entry(const dm_fb_entry_t *e, alloc_use_t *u, unsigned char **img, size_t *n,
                             char *why, size_t whylen) {
  int rc = dm_fb_entry_load(e, img, n, why, whylen);
  if (rc < 0) return rc;
  dm_cubin_info_t ci;
  rc = dm_cubin_inspect(*img, *n, &ci, why, whylen);
  if (rc < 0) {
    free(*img);
    *img = NULL;
    return rc;
  }
  u->have = 1;
  u->uses_stock = dm_cubin_uses_stock_malloc(&ci);
  u->has_devmalloc = dm_cubin_has_devmalloc(&ci);
  u->source = "ELF symbols";
  return 0;
}

static void use_from_ptx(const char *ptx, size_t n, alloc_use_t *u) {
  dm_ptx_info_t pi;
  dm_ptx_scan(ptx, n, &pi);
  if (!u->have) {
    u->have = 1;
    u->uses_stock = dm_ptx_uses_stock_malloc(&pi);
    u->source = "PTX declarations";
  }
  u->has_devmalloc |= dm_ptx_has_devmalloc(&pi);
}

void dm_relink_key_common(dm_cache_keyer_t *k, const dm_jit_target_t *t, const dm_devmalloc_code_t *dc) {
  dm_cache_key_add_str(k, DEVMALLOC_VERSION_STRING);
  dm_cache_key_add_str(k, dc->sass ? "devmalloc-sass" : "devmalloc-ptx-at-app-target");
  dm_cache_key_add(k, dc->digest, 32); /* hashed at build time */
  dm_cache_key_add_u64(k, (uint64_t)t->cc_major * 10 + (uint64_t)t->cc_minor);
  dm_cache_key_add_u64(k, (uint64_t)t->driver_version);
  dm_cache_key_add_str(k, t->driver_id);
  dm_cache_key_add_u64(k, DM_DEVICE_MAXRREG); /* devmalloc's register cap */
}

static void make_key(const char *ptx, size_t n, const dm_jit_target_t *t, const dm_devmalloc_code_t *dc,
                     dm_cache_key_t *key) {
  dm_cache_keyer_t k;
  dm_cache_key_init(&k, "devmalloc-jit-v1");
  dm_cache_key_add(&k, ptx, n);
  dm_cache_key_add_str(&k, opts.inline_calls ? "calls-inlined" : "calls");
  dm_relink_key_common(&k, t, dc);
  dm_cache_key_final(&k, key);
}

int dm_relink_fetch(const char *label, const char *what, const dm_cache_key_t *key, int ahead,
                    const void **out, size_t *out_size, char *note, size_t notelen) {
  double t0 = dm_clock_ms();
  void *img;
  size_t sz;
  if (!cache || dm_cache_get(cache, key, &img, &sz, note, notelen) != 1) return 0;
  if (!ahead) /* read ahead: counted and told when the load takes it */
    dm_relink_event(DM_OBS_CACHE_HIT, label);
  if (opts.verbose)
    dm_log(DM_LOG_INFO,
           "jit: %s: %s re-linked with devmalloc "
           "(cache hit, %.1f ms, %zu bytes)",
           label, what, dm_clock_ms() - t0, sz);
  *out = img;
  *out_size = sz;
  return 1;
}

int dm_relink_link(const char *label, const char *what, dm_jit_input_t *in, int n, dm_devmalloc_code_t *dc,
                   unsigned app_arch, const dm_cache_key_t *key, const char *note, const void **out,
                   size_t *out_size, char *why, size_t whylen) {
  double t0 = dm_clock_ms();
  if (cache) dm_relink_event(DM_OBS_CACHE_MISS, label);
  in[n] = dc->in;
  void *img;
  size_t sz;
  int linked = dm_jit_link(in, n + 1, &img, &sz, why, whylen);
  char sass_why[256] = "";
  if (linked < 0 && dc->sass) { /* a driver that refuses the SASS: its PTX */
    snprintf(sass_why, sizeof sass_why, "%s", why);
    dm_devmalloc_code_free(dc);
    if (dm_devmalloc_code(0, app_arch, 0, dc, why, whylen) < 0) return 0;
    in[n] = dc->in;
    linked = dm_jit_link(in, n + 1, &img, &sz, why, whylen);
  }
  if (linked < 0) return 0;
  double jit_ms = dm_clock_ms() - t0;
  const char *cached = "cache off";
  int show_note = cache && note[0] && strcmp(note, "cache miss") != 0;
  char cwhy[256] = "";
  if (cache) cached = dm_cache_put(cache, key, img, sz, cwhy, sizeof cwhy) == 0 ? "cached" : cwhy;
  if (opts.verbose)
    dm_log(DM_LOG_INFO,
           "jit: %s: %s re-linked with devmalloc "
           "(JIT link %.1f ms, %zu bytes, %s%s%s; devmalloc as %s_%u %s%s%s)",
           label, what, jit_ms, sz, cached, show_note ? "; " : "", show_note ? note : "",
           dc->sass ? "sm" : "compute", dc->arch, dc->sass ? "SASS" : "PTX",
           sass_why[0] ? ", its SASS refused: " : "", sass_why);
  *out = img;
  *out_size = sz;
  return 1;
}

static int relink_ptx_code(const char *label, const char *what, const char *ptx, size_t n, unsigned arch,
                           alloc_use_t *u, const dm_jit_target_t *t, dm_devmalloc_code_t *dc, int ahead,
                           char *note, size_t notelen, const void **out, size_t *out_size, char *why,
                           size_t whylen);

/* ahead: only what the cache holds (dm_relink_read_ahead), never a link */
static int relink_ptx_text(const char *label, const char *ptx, size_t n, unsigned arch, alloc_use_t *u,
                           const dm_jit_target_t *t, int ahead, const void **out, size_t *out_size, char *why,
                           size_t whylen) {
  char note[PATH_MAX + 160] = "", what[32];
  snprintf(what, sizeof what, "compute_%u PTX", arch);
  unsigned cc = (unsigned)(t->cc_major * 10 + t->cc_minor);
  dm_devmalloc_code_t dc;
  if (dm_devmalloc_code(cc, arch, opts.sass, &dc, why, whylen) < 0) return 0;
  int r = relink_ptx_code(label, what, ptx, n, arch, u, t, &dc, ahead, note, sizeof note, out, out_size, why,
                          whylen);
  dm_devmalloc_code_free(&dc);
  return r;
}

static int relink_ptx_code(const char *label, const char *what, const char *ptx, size_t n, unsigned arch,
                           alloc_use_t *u, const dm_jit_target_t *t, dm_devmalloc_code_t *dc, int ahead,
                           char *note, size_t notelen, const void **out, size_t *out_size, char *why,
                           size_t whylen) {
  dm_cache_key_t key;
  int looked = u->have && cache;
  if (looked) { /* the ELF's verdict is in: the cache first (header comment) */
    make_key(ptx, n, t, dc, &key);
    if (dm_relink_fetch(label, what, &key, ahead, out, out_size, note, notelen)) return 1;
  }
  use_from_ptx(ptx, n, u);
  if (u->has_devmalloc) return dm_fail(0, why, whylen, "%s: already linked with devmalloc", label);
  if (!u->uses_stock && opts.jit != JIT_FORCE)
    return dm_fail(0, why, whylen, "%s: does not call device malloc/free (%s)", label, u->source);
  if (!looked) {
    make_key(ptx, n, t, dc, &key);
    if (dm_relink_fetch(label, what, &key, ahead, out, out_size, note, notelen)) return 1;
  }
  if (ahead)
    return dm_fail(0, why, whylen, "%s: not in the cache (%s)", label, note[0] ? note : "cache miss");
  dm_jit_input_t in[2] = {{"app.ptx", ptx, n, 0, DM_JIT_IN_PTX}};
  char *inlined = NULL;
  size_t ilen = 0;
  int calls = 0;
  if (opts.inline_calls) { /* free's common path written into its calls (ptx_inline.h) */
    char iwhy[256] = "";
    calls = dm_ptx_inline(ptx, n, dm_devmalloc_ptx_text(), &inlined, &ilen, iwhy, sizeof iwhy);
    if (calls < 0 && opts.verbose) dm_log(DM_LOG_INFO, "jit: %s: calls not inlined: %s", label, iwhy);
    if (calls > 0) {
      in[0].ptx = inlined;
      in[0].size = ilen;
    }
  }
  int r = dm_relink_link(label, what, in, 1, dc, arch, &key, note, out, out_size, why, whylen);
  if (!r && calls > 0) { /* a link the inlined text failed: the calls as they were */
    dm_log(DM_LOG_WARN,
           "warning: %s: the link with free inlined failed (%s); linking "
           "the calls instead",
           label, why);
    in[0] = (dm_jit_input_t){"app.ptx", ptx, n, 0, DM_JIT_IN_PTX};
    calls = 0;
    r = dm_relink_link(label, what, in, 1, dc, arch, &key, note, out, out_size, why, whylen);
  }
  if (r && calls > 0 && opts.verbose) dm_log(DM_LOG_INFO, "jit: %s: %d calls of free inlined", label, calls);
  free(inlined);
  return r;
}

static int relink_fatbin(const char *label, const dm_fatbin_t *fb, const dm_jit_target_t *t, int ahead,
                         const void **out, size_t *out_size, char *why, size_t whylen) {
  unsigned cc = (unsigned)(t->cc_major * 10 + t->cc_minor);
  pick_t pk;
  char ewhy[200];
  if (pick_entries(fb, cc, &pk, ewhy, sizeof ewhy) < 0)
    return dm_fail(0, why, whylen, "%s: corrupt fatbin: %s", label, ewhy);
  alloc_use_t u = {0};
  unsigned char *elf = NULL;
  size_t elf_n = 0;
  if (pk.have_elf && inspect_elf_entry(&pk.elf, &u, &elf, &elf_n, ewhy, sizeof ewhy) < 0)
    return dm_fail(0, why, whylen, "%s: sm_%u ELF unreadable: %s", label, pk.elf.arch, ewhy);
  int r;
  if (u.have && u.has_devmalloc)
    r = dm_fail(0, why, whylen, "%s: already linked with devmalloc", label);
  else if (u.have && !u.uses_stock && opts.jit != JIT_FORCE)
    r = dm_fail(0, why, whylen, "%s: does not call device malloc/free (%s)", label, u.source);
  else if (!pk.have_ptx && !pk.ptx_archs_seen && pk.have_elf && u.have) /* an -rdc image? */
    r = dm_relink_rdc(label, fb, elf, elf_n, t, ahead, out, out_size, why, whylen);
  else
    r = -1;
  free(elf);
  if (r >= 0) return r;
  if (!pk.have_ptx) {
    if (pk.ptx_archs_seen)
      return dm_fail(0, why, whylen, "%s: no PTX for sm_%u (lowest is compute_%u)", label, cc,
                     pk.lowest_ptx_arch);
    return dm_fail(0, why, whylen, "%s: no PTX in the fatbin (SASS only cannot be re-linked)", label);
  }
  unsigned char *ptx;
  size_t n;
  if (dm_fb_entry_load(&pk.ptx, &ptx, &n, ewhy, sizeof ewhy) < 0)
    return dm_fail(0, why, whylen, "%s: compute_%u PTX: %s", label, pk.ptx.arch, ewhy);
  r = relink_ptx_text(label, (const char *)ptx, n, pk.ptx.arch, &u, t, ahead, out, out_size, why, whylen);
  free(ptx);
  return r;
}

/* Re-link an image for the current context's device. CUDA 12+ runtimes load
 * their libraries before any context exists (context-independent loading):
 * the target is then device 0, and only an actual link (a cache miss of a
 * module that calls malloc) runs in its primary context (jit_link.c).
 * `ahead`: the target that dm_relink_read_ahead gives, and only a cache
 * hit; NULL: a load's re-link, which first takes the image read ahead for
 * this fatbin and target, if any (ahead.h). */
static int relink_buffer(const void *image, size_t len, const char *label, const dm_jit_target_t *ahead,
                         const void **out, size_t *out_size, char *why, size_t whylen) {
  pthread_once(&once, relink_init);
  if (opts.jit == JIT_OFF) return dm_fail(0, why, whylen, "%s: DEVMALLOC_JIT=off", label);
  if (!image) return dm_fail(0, why, whylen, "%s: no image", label);
  dm_image_kind_t kind = dm_image_kind(image, len ? len : 4);
  if (kind == DM_IMG_UNKNOWN) return dm_fail(0, why, whylen, "%s: unknown image format", label);

  char ewhy[200];
  if (kind == DM_IMG_ELF) {
    size_t n = len;
    dm_cubin_info_t ci;
    if ((!n && dm_elf_image_size(image, DM_IMAGE_MAX, &n, ewhy, sizeof ewhy) < 0) ||
        dm_cubin_inspect(image, n, &ci, ewhy, sizeof ewhy) < 0)
      return dm_fail(0, why, whylen, "%s: cubin unreadable: %s", label, ewhy);
    if (dm_cubin_has_devmalloc(&ci))
      return dm_fail(0, why, whylen, "%s: already linked with devmalloc", label);
    if (!dm_cubin_uses_stock_malloc(&ci))
      return dm_fail(0, why, whylen, "%s: cubin does not call device malloc/free", label);
    return dm_fail(0, why, whylen,
                   "%s: sm_%u cubin calls stock malloc but carries no PTX "
                   "(SASS cannot be re-linked)",
                   label, ci.sm);
  }

  dm_jit_target_t t;
  if (ahead)
    t = *ahead;
  else if (dm_jit_target(&t, ewhy, sizeof ewhy) < 0)
    return dm_fail(0, why, whylen, "%s: %s", label, ewhy);
  else if (len && dm_ahead_take(image, len, &t, out, out_size)) {
    dm_relink_event(DM_OBS_CACHE_HIT, label);
    if (opts.verbose)
      dm_log(DM_LOG_INFO,
             "jit: %s: re-linked with devmalloc (read from the cache ahead, "
             "%zu bytes)",
             label, *out_size);
    return 1;
  }

  if (kind == DM_IMG_PTX) {
    const char *p = image;
    size_t n = len ? strnlen(p, len) : strnlen(p, DM_IMAGE_MAX);
    alloc_use_t u = {0};
    dm_ptx_info_t pi;
    dm_ptx_scan(p, n, &pi);
    if (pi.target_sm > (unsigned)(t.cc_major * 10 + t.cc_minor))
      return dm_fail(0, why, whylen, "%s: PTX targets sm_%u, device is sm_%d%d", label, pi.target_sm,
                     t.cc_major, t.cc_minor);
    char *ended = NULL; /* the linker is given the text with its NUL */
    if (len && n == len) {
      if (!(ended = malloc(n + 1))) return dm_fail(0, why, whylen, "%s: out of memory", label);
      memcpy(ended, p, n);
      ended[n] = 0;
      p = ended;
    }
    int r = relink_ptx_text(label, p, n, pi.target_sm, &u, &t, ahead != NULL, out, out_size, why, whylen);
    free(ended);
    return r;
  }

  dm_fatbin_t fb;
  int rc;
  if (kind == DM_IMG_WRAPPER) {
    if (len) /* a wrapper from a file makes no sense: its pointer is not ours */
      return dm_fail(0, why, whylen, "%s: registration wrapper outside a process image", label);
    rc = dm_fatbin_from_wrapper(image, &fb, ewhy, sizeof ewhy);
  } else if (len) {
    rc = dm_fatbin_open(image, len, &fb, ewhy, sizeof ewhy);
  } else {
    uint64_t body;
    uint16_t hs;
    memcpy(&hs, (const char *)image + 6, 2);
    memcpy(&body, (const char *)image + 8, 8);
    rc = body > DM_IMAGE_MAX ? -EINVAL : dm_fatbin_open(image, hs + (size_t)body, &fb, ewhy, sizeof ewhy);
    if (body > DM_IMAGE_MAX)
      snprintf(ewhy, sizeof ewhy, "fatbin size %llu implausible", (unsigned long long)body);
  }
  if (rc < 0) return dm_fail(0, why, whylen, "%s: corrupt fatbin: %s", label, ewhy);
  return relink_fatbin(label, &fb, &t, ahead != NULL, out, out_size, why, whylen);
}

int dm_relink_image(const void *image, const void **out, size_t *out_size, char *why, size_t whylen) {
  char label[48];
  snprintf(label, sizeof label, "module %p", image);
  return relink_buffer(image, 0, label, NULL, out, out_size, why, whylen);
}

int dm_relink_sized(const void *image, const void *body, size_t len, const void **out, size_t *out_size,
                    char *why, size_t whylen) {
  char label[48];
  snprintf(label, sizeof label, "module %p", image);
  if (!body || !len) return dm_fail(0, why, whylen, "%s: no image", label);
  return relink_buffer(body, len, label, NULL, out, out_size, why, whylen);
}

int dm_relink_read_ahead(const void *body, size_t len, int dev, char *why, size_t whylen) {
  char label[48], ewhy[200];
  snprintf(label, sizeof label, "module %p", body);
  pthread_once(&once, relink_init);
  if (!body || !len) return dm_fail(0, why, whylen, "%s: no image", label);
  if (opts.jit == JIT_OFF || !cache) return dm_fail(0, why, whylen, "%s: no re-link cache", label);
  dm_jit_target_t t;
  if (dm_jit_target_of(dev, &t, ewhy, sizeof ewhy) < 0) return dm_fail(0, why, whylen, "%s: %s", label, ewhy);
  const void *img;
  size_t sz;
  if (relink_buffer(body, len, label, &t, &img, &sz, why, whylen) != 1) return 0;
  if (!dm_ahead_put(body, len, &t, img, sz)) {
    dm_relink_free(img);
    return dm_fail(0, why, whylen, "%s: %d images read ahead already", label, DM_AHEAD_MAX);
  }
  return 1;
}

/* Read all of a module file into a NUL-terminated buffer: regular files only
 * (opened O_NONBLOCK, so a FIFO cannot block us), at most DM_IMAGE_MAX bytes,
 * and nothing past the first bytes when they are no image format. */
static char *read_module_file(const char *path, size_t *len, char *why, size_t whylen) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  char *buf = NULL;
  if (fd < 0) {
    dm_fail(0, why, whylen, "%s: cannot open", path);
    return NULL;
  }
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
    dm_fail(0, why, whylen, "%s: not a regular file", path);
  } else if ((uint64_t)st.st_size > DM_IMAGE_MAX) {
    dm_fail(0, why, whylen, "%s: %lld bytes exceed the image limit %zu", path, (long long)st.st_size,
            (size_t)DM_IMAGE_MAX);
  } else if (!(buf = malloc((size_t)st.st_size + 1))) {
    dm_fail(0, why, whylen, "%s: out of memory", path);
  } else {
    size_t want = (size_t)st.st_size, n = 0;
    while (n < want) {
      ssize_t r = read(fd, buf + n, want - n);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      n += (size_t)r;
      if (n >= 4 && dm_image_kind(buf, n) == DM_IMG_UNKNOWN) break; /* no image: read no further */
    }
    int known = dm_image_kind(buf, n) != DM_IMG_UNKNOWN;
    if (n < want || !known) {
      dm_fail(0, why, whylen, known ? "%s: cannot read" : "%s: unknown image format", path);
      free(buf);
      buf = NULL;
    } else {
      buf[n] = 0; /* PTX files: text must end */
      *len = n;
    }
  }
  close(fd);
  return buf;
}

int dm_relink_file(const char *path, const void **out, size_t *out_size, char *why, size_t whylen) {
  size_t n = 0;
  char *buf = read_module_file(path, &n, why, whylen);
  if (!buf) return 0;
  int r = relink_buffer(buf, n, path, NULL, out, out_size, why, whylen);
  free(buf);
  return r;
}

void dm_relink_free(const void *image) { free((void *)image); }
