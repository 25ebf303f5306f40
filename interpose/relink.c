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
 * DEVMALLOC_VERBOSE) are read once by relink_opts_read(): from the shim's
 * dm_options() (options.h, a weak reference) when the shim is linked in,
 * else from the environment (host tests, tools).
 * At DEVMALLOC_VERBOSE >= 1 each successful re-link prints one line to
 * stderr ("devmalloc: jit: ..."); refusals are printed by the shim from `why`.
 *
 * Errors: relink.h's 1/0 + why. Locking: options, the cache handle and the
 * hash of devmalloc's PTX are set up once under pthread_once and read-only
 * afterwards; a re-link holds no lock while it JIT-links.
 */
#include "relink.h"
#include "cache.h"
#include "cubin_elf.h"
#include "decompress.h"
#include "fatbin.h"
#include "jit_link.h"
#include "options.h"
#include "ptx_scan.h"
#include "relink_err.h"
#include "devmalloc.h"
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* devmalloc's PTX, NUL-terminated (devmalloc_ptx.S). */
extern const char dm_devmalloc_ptx[];
extern const char dm_devmalloc_ptx_end[];

enum { JIT_OFF, JIT_AUTO, JIT_FORCE };

typedef struct {
    int  jit;
    int  verbose;
    char cache_dir[PATH_MAX];   /* "" : cache off */
} relink_opts_t;

static relink_opts_t opts;
static dm_cache_t *cache;
static uint8_t dm_ptx_hash[32];
static size_t dm_ptx_len;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* The one place options are read: the shim's table (options.h) when it is
 * linked in, else the environment (host tests, tools). */
#pragma weak dm_options
static void relink_opts_read(relink_opts_t *o)
{
    const char *d;
    if (dm_options) {
        const dm_options_t *so = dm_options();
        o->jit = so->jit == DM_JIT_OFF ? JIT_OFF : so->jit == DM_JIT_FORCE ? JIT_FORCE : JIT_AUTO;
        o->verbose = so->verbose;
        d = so->cache_dir;
    } else {
        /* same syntax as the table (opt_parse.h); malformed = default */
        dm_opt_jit_t j = DM_JIT_AUTO;
        dm_opt_level_t v = 0;
        (void)dm_parse_jit(getenv("DEVMALLOC_JIT"), &j);
        (void)dm_parse_level(getenv("DEVMALLOC_VERBOSE"), &v);
        o->jit = j == DM_JIT_OFF ? JIT_OFF : j == DM_JIT_FORCE ? JIT_FORCE : JIT_AUTO;
        o->verbose = v;
        d = getenv("DEVMALLOC_CACHE_DIR");
    }
    o->cache_dir[0] = 0;
    if (d && *d) {
        if (strcasecmp(d, "off") != 0)
            snprintf(o->cache_dir, sizeof o->cache_dir, "%s", d);
    } else {
        dm_cache_default_dir(o->cache_dir, sizeof o->cache_dir, NULL, 0);
    }
}

static void relink_init(void)
{
    relink_opts_read(&opts);
    dm_ptx_len = strnlen(dm_devmalloc_ptx, (size_t)(dm_devmalloc_ptx_end - dm_devmalloc_ptx));
    dm_sha256(dm_devmalloc_ptx, dm_ptx_len, dm_ptx_hash);
    if (opts.jit != JIT_OFF && opts.cache_dir[0]) {
        char why[PATH_MAX + 128];
        if (dm_cache_open(opts.cache_dir, &cache, why, sizeof why) < 0)
            fprintf(stderr, "devmalloc: warning: JIT cache disabled: %s\n", why);
    }
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* What the module says about device malloc, from ELF entries or PTX. */
typedef struct {
    int have;            /* 1: some source of truth was read */
    int uses_stock;
    int has_devmalloc;
    const char *source;  /* "ELF symbols" / "PTX declarations" */
} alloc_use_t;

typedef struct {
    dm_fb_entry_t ptx;   /* best PTX entry */
    int have_ptx;
    unsigned ptx_archs_seen, lowest_ptx_arch;
    dm_fb_entry_t elf;   /* ELF entry to inspect: device arch, else highest */
    int have_elf;
    unsigned nentries;
} pick_t;

static int pick_entries(const dm_fatbin_t *fb, unsigned cc, pick_t *pk,
                        char *why, size_t whylen)
{
    memset(pk, 0, sizeof *pk);
    size_t cur = 0;
    dm_fb_entry_t e;
    int rc;
    while ((rc = dm_fatbin_next(fb, &cur, &e, why, whylen)) == 1) {
        pk->nentries++;
        if (e.kind == DM_FB_KIND_PTX) {
            pk->ptx_archs_seen++;
            if (!pk->lowest_ptx_arch || e.arch < pk->lowest_ptx_arch)
                pk->lowest_ptx_arch = e.arch;
            if (e.arch <= cc && (!pk->have_ptx || e.arch > pk->ptx.arch)) {
                pk->ptx = e;
                pk->have_ptx = 1;
            }
        } else if (e.kind == DM_FB_KIND_ELF) {
            int better = !pk->have_elf ||
                         (pk->elf.arch != cc && (e.arch == cc || e.arch > pk->elf.arch));
            if (better) {
                pk->elf = e;
                pk->have_elf = 1;
            }
        }
    }
    return rc;
}

static int inspect_elf_entry(const dm_fb_entry_t *e, alloc_use_t *u,
                             char *why, size_t whylen)
{
    unsigned char *img;
    size_t n;
    int rc = dm_fb_entry_load(e, &img, &n, why, whylen);
    if (rc < 0)
        return rc;
    dm_cubin_info_t ci;
    rc = dm_cubin_inspect(img, n, &ci, why, whylen);
    free(img);
    if (rc < 0)
        return rc;
    u->have = 1;
    u->uses_stock = dm_cubin_uses_stock_malloc(&ci);
    u->has_devmalloc = dm_cubin_has_devmalloc(&ci);
    u->source = "ELF symbols";
    return 0;
}

static void use_from_ptx(const char *ptx, size_t n, alloc_use_t *u)
{
    dm_ptx_info_t pi;
    dm_ptx_scan(ptx, n, &pi);
    if (!u->have) {
        u->have = 1;
        u->uses_stock = dm_ptx_uses_stock_malloc(&pi);
        u->source = "PTX declarations";
    }
    u->has_devmalloc |= dm_ptx_has_devmalloc(&pi);
}

static void make_key(const char *ptx, size_t n, const dm_jit_target_t *t,
                     dm_cache_key_t *key)
{
    dm_cache_keyer_t k;
    dm_cache_key_init(&k, "devmalloc-jit-v1");
    dm_cache_key_add_str(&k, DEVMALLOC_VERSION_STRING);
    dm_cache_key_add(&k, dm_ptx_hash, sizeof dm_ptx_hash);
    dm_cache_key_add(&k, ptx, n);
    dm_cache_key_add_u64(&k, (uint64_t)t->cc_major * 10 + (uint64_t)t->cc_minor);
    dm_cache_key_add_u64(&k, (uint64_t)t->driver_version);
    dm_cache_key_add_str(&k, t->driver_id);
    dm_cache_key_add_str(&k, "link-opts:default");
    dm_cache_key_final(&k, key);
}

/* Link (or fetch from the cache) ptx + devmalloc's PTX. */
static int link_or_fetch(const char *label, const char *ptx, size_t n,
                         unsigned ptx_arch, const dm_jit_target_t *t,
                         const void **out, size_t *out_size, char *why, size_t whylen)
{
    dm_cache_key_t key;
    make_key(ptx, n, t, &key);
    double t0 = now_ms();
    char note[PATH_MAX + 160] = "";
    if (cache) {
        void *img;
        size_t sz;
        if (dm_cache_get(cache, &key, &img, &sz, note, sizeof note) == 1) {
            if (opts.verbose)
                fprintf(stderr, "devmalloc: jit: %s: compute_%u PTX re-linked with devmalloc "
                        "(cache hit, %.1f ms, %zu bytes)\n", label, ptx_arch, now_ms() - t0, sz);
            *out = img;
            *out_size = sz;
            return 1;
        }
    }
    dm_jit_input_t in[2] = {
        { "app.ptx", ptx, n },
        { "devmalloc.ptx", dm_devmalloc_ptx, dm_ptx_len },
    };
    void *img;
    size_t sz;
    if (dm_jit_link_ptx(in, 2, &img, &sz, why, whylen) < 0)
        return 0;
    double jit_ms = now_ms() - t0;
    const char *cached = "cache off";
    int show_note = cache && note[0] && strcmp(note, "cache miss") != 0;
    char cwhy[256] = "";
    if (cache)
        cached = dm_cache_put(cache, &key, img, sz, cwhy, sizeof cwhy) == 0 ? "cached" : cwhy;
    if (opts.verbose)
        fprintf(stderr, "devmalloc: jit: %s: compute_%u PTX re-linked with devmalloc "
                "(JIT link %.1f ms, %zu bytes, %s%s%s)\n", label, ptx_arch, jit_ms, sz,
                cached, show_note ? "; " : "", show_note ? note : "");
    *out = img;
    *out_size = sz;
    return 1;
}

static int relink_ptx_text(const char *label, const char *ptx, size_t n,
                           unsigned arch, alloc_use_t *u, const dm_jit_target_t *t,
                           const void **out, size_t *out_size, char *why, size_t whylen)
{
    use_from_ptx(ptx, n, u);
    if (u->has_devmalloc)
        return dm_fail(0, why, whylen, "%s: already linked with devmalloc", label);
    if (!u->uses_stock && opts.jit != JIT_FORCE)
        return dm_fail(0, why, whylen, "%s: does not call device malloc/free (%s)",
                       label, u->source);
    return link_or_fetch(label, ptx, n, arch, t, out, out_size, why, whylen);
}

static int relink_fatbin(const char *label, const dm_fatbin_t *fb,
                         const dm_jit_target_t *t, const void **out,
                         size_t *out_size, char *why, size_t whylen)
{
    unsigned cc = (unsigned)(t->cc_major * 10 + t->cc_minor);
    pick_t pk;
    char ewhy[200];
    if (pick_entries(fb, cc, &pk, ewhy, sizeof ewhy) < 0)
        return dm_fail(0, why, whylen, "%s: corrupt fatbin: %s", label, ewhy);
    alloc_use_t u = { 0 };
    if (pk.have_elf && inspect_elf_entry(&pk.elf, &u, ewhy, sizeof ewhy) < 0)
        return dm_fail(0, why, whylen, "%s: sm_%u ELF unreadable: %s", label, pk.elf.arch, ewhy);
    if (u.have && u.has_devmalloc)
        return dm_fail(0, why, whylen, "%s: already linked with devmalloc", label);
    if (u.have && !u.uses_stock && opts.jit != JIT_FORCE)
        return dm_fail(0, why, whylen, "%s: does not call device malloc/free (%s)",
                       label, u.source);
    if (!pk.have_ptx) {
        if (pk.ptx_archs_seen)
            return dm_fail(0, why, whylen, "%s: no PTX for sm_%u (lowest is compute_%u)",
                           label, cc, pk.lowest_ptx_arch);
        return dm_fail(0, why, whylen, "%s: no PTX in the fatbin (SASS only cannot be re-linked)",
                       label);
    }
    unsigned char *ptx;
    size_t n;
    if (dm_fb_entry_load(&pk.ptx, &ptx, &n, ewhy, sizeof ewhy) < 0)
        return dm_fail(0, why, whylen, "%s: compute_%u PTX: %s", label, pk.ptx.arch, ewhy);
    int r = relink_ptx_text(label, (const char *)ptx, n, pk.ptx.arch, &u, t, out,
                            out_size, why, whylen);
    free(ptx);
    return r;
}

static int relink_buffer(const void *image, size_t len, const char *label,
                         const void **out, size_t *out_size, char *why, size_t whylen)
{
    pthread_once(&once, relink_init);
    if (opts.jit == JIT_OFF)
        return dm_fail(0, why, whylen, "%s: DEVMALLOC_JIT=off", label);
    if (!image)
        return dm_fail(0, why, whylen, "%s: no image", label);
    dm_image_kind_t kind = dm_image_kind(image, len ? len : 4);
    if (kind == DM_IMG_UNKNOWN)
        return dm_fail(0, why, whylen, "%s: unknown image format", label);

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
        return dm_fail(0, why, whylen, "%s: sm_%u cubin calls stock malloc but carries no PTX "
                       "(SASS cannot be re-linked)", label, ci.sm);
    }

    dm_jit_target_t t;
    if (dm_jit_target(&t, ewhy, sizeof ewhy) < 0)
        return dm_fail(0, why, whylen, "%s: %s", label, ewhy);

    if (kind == DM_IMG_PTX) {
        const char *p = image;
        size_t n = len ? strnlen(p, len) : strnlen(p, DM_IMAGE_MAX);
        alloc_use_t u = { 0 };
        dm_ptx_info_t pi;
        dm_ptx_scan(p, n, &pi);
        if (pi.target_sm > (unsigned)(t.cc_major * 10 + t.cc_minor))
            return dm_fail(0, why, whylen, "%s: PTX targets sm_%u, device is sm_%d%d", label,
                           pi.target_sm, t.cc_major, t.cc_minor);
        return relink_ptx_text(label, p, n, pi.target_sm, &u, &t, out, out_size, why, whylen);
    }

    dm_fatbin_t fb;
    int rc;
    if (kind == DM_IMG_WRAPPER) {
        if (len)   /* a wrapper from a file makes no sense: its pointer is not ours */
            return dm_fail(0, why, whylen, "%s: registration wrapper outside a process image", label);
        rc = dm_fatbin_from_wrapper(image, &fb, ewhy, sizeof ewhy);
    } else if (len) {
        rc = dm_fatbin_open(image, len, &fb, ewhy, sizeof ewhy);
    } else {
        uint64_t body;
        uint16_t hs;
        memcpy(&hs, (const char *)image + 6, 2);
        memcpy(&body, (const char *)image + 8, 8);
        rc = body > DM_IMAGE_MAX ? -EINVAL
                                 : dm_fatbin_open(image, hs + (size_t)body, &fb, ewhy, sizeof ewhy);
        if (body > DM_IMAGE_MAX)
            snprintf(ewhy, sizeof ewhy, "fatbin size %llu implausible", (unsigned long long)body);
    }
    if (rc < 0)
        return dm_fail(0, why, whylen, "%s: corrupt fatbin: %s", label, ewhy);
    return relink_fatbin(label, &fb, &t, out, out_size, why, whylen);
}

int dm_relink_image(const void *image, const void **out, size_t *out_size,
                    char *why, size_t whylen)
{
    char label[48];
    snprintf(label, sizeof label, "module %p", image);
    return relink_buffer(image, 0, label, out, out_size, why, whylen);
}

int dm_relink_file(const char *path, const void **out, size_t *out_size,
                   char *why, size_t whylen)
{
    FILE *f = fopen(path, "rbe");
    if (!f)
        return dm_fail(0, why, whylen, "%s: cannot open", path);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (n < cap || cap >= DM_IMAGE_MAX)
            break;
        char *nb = realloc(buf, cap * 2 + 1);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    int err = ferror(f);
    fclose(f);
    if (!buf || err) {
        free(buf);
        return dm_fail(0, why, whylen, "%s: cannot read", path);
    }
    buf[n] = 0;   /* PTX files: text must end */
    int r = relink_buffer(buf, n, path, out, out_size, why, whylen);
    free(buf);
    return r;
}

void dm_relink_free(const void *image)
{
    free((void *)image);
}
