/*
 * ptx_inline.c — free's common path written into an application's PTX at its
 * calls of free (ptx_inline.h has the contract).
 *
 * The PTX both come as is what nvcc writes: one statement a line but for
 * calls, which span lines; a call wrapped in its own `{ ... }` block with
 * its `.param` declarations. The body is taken from devmalloc's PTX
 * (the one the shim links when it has no SASS), whose other functions the
 * link provides.
 *
 * Locking: none (no state).
 */
#include "ptx_inline.h"
#include "image/relink_err.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARAMS 4
/* Calls of a function (a kernel or a device function) written inline; its
 * further calls stay calls. Each lengthens the compile of that function, the
 * more the longer it grows (docs/decisions.md, "Inlining under the shim"). */
#define DM_INLINE_PER_FUNC 4
#define MAX_NAMES 64
#define NAME_LEN 96

/* ---- a growing text ---- */
typedef struct {
  char *p;
  size_t n, cap;
  int oom;
} buf_t;

static void put(buf_t *b, const char *s, size_t n) {
  if (b->oom) return;
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (b->n + n + 1 > cap) cap *= 2;
    char *q = realloc(b->p, cap);
    if (!q) {
      b->oom = 1;
      return;
    }
    b->p = q;
    b->cap = cap;
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = 0;
}
static void puts_(buf_t *b, const char *s) { put(b, s, strlen(s)); }
static void putf(buf_t *b, const char *fmt, const char *a, const char *c) {
  char line[512];
  int k = snprintf(line, sizeof line, fmt, a, c);
  if (k < 0 || (size_t)k >= sizeof line)
    b->oom = 1;
  else
    put(b, line, (size_t)k);
}

/* ---- scanning ---- */
static int id_char(int c) { return isalnum(c) || c == '_' || c == '$'; }
static const char *skip_ws(const char *s, const char *end) {
  while (s < end && isspace((unsigned char)*s)) s++;
  return s;
}
/* The identifier at s into out (at most NAME_LEN - 1 characters); its end. */
static const char *ident(const char *s, const char *end, char out[NAME_LEN]) {
  size_t k = 0;
  while (s < end && id_char((unsigned char)*s) && k + 1 < NAME_LEN) out[k++] = *s++;
  out[k] = 0;
  return s;
}
/* The `}` that closes the `{` at open (braces in // comments skipped), or NULL. */
static const char *close_brace(const char *open, const char *end) {
  int depth = 0;
  for (const char *s = open; s < end; s++) {
    if (s[0] == '/' && s + 1 < end && s[1] == '/') {
      while (s < end && *s != '\n') s++;
      continue;
    }
    if (*s == '{') depth++;
    if (*s == '}' && --depth == 0) return s;
  }
  return NULL;
}
/* The `)` that closes the `(` at open, or NULL. */
static const char *close_paren(const char *open, const char *end) {
  for (const char *s = open; s < end; s++)
    if (*s == ')') return s;
  return NULL;
}
/* The name of each `.param .TYPE NAME` in [s, end). */
static int param_names(const char *s, const char *end, char names[][NAME_LEN], int most) {
  int n = 0;
  for (const char *p = s; p < end && (p = strstr(p, ".param")) && p < end; p += 6) {
    const char *q = skip_ws(p + 6, end);
    while (q < end && *q == '.') { /* .TYPE, .align N */
      q = ident(q + 1, end, names[n < most ? n : most - 1]);
      q = skip_ws(q, end);
      while (q < end && isdigit((unsigned char)*q)) q++;
      q = skip_ws(q, end);
    }
    if (n >= most) return -1;
    ident(q, end, names[n]);
    if (!names[n][0]) return -1;
    n++;
  }
  return n;
}

/* ---- devmalloc's functions ---- */
typedef struct {
  char name[NAME_LEN];
  char ret[NAME_LEN]; /* its result parameter ("" for none) */
  char params[MAX_PARAMS][NAME_LEN];
  int nparams;
  const char *body, *body_end; /* between its braces */
} func_t;

/* The definition of `name` (a .visible .func) in dm. */
static int find_func(const char *dm, const char *name, func_t *f) {
  const char *end = dm + strlen(dm);
  for (const char *s = dm; (s = strstr(s, "\n.visible .func")) != NULL; s++) {
    const char *p = skip_ws(s + strlen("\n.visible .func"), end);
    memset(f, 0, sizeof *f);
    if (*p == '(') {
      const char *c = close_paren(p, end);
      char r[1][NAME_LEN];
      if (!c || param_names(p, c, r, 1) != 1) continue;
      strcpy(f->ret, r[0]);
      p = skip_ws(c + 1, end);
    }
    p = ident(p, end, f->name);
    if (strcmp(f->name, name) != 0) continue;
    p = skip_ws(p, end);
    if (*p != '(') return -1;
    const char *c = close_paren(p, end);
    if (!c || (f->nparams = param_names(p, c, f->params, MAX_PARAMS)) < 0) return -1;
    p = skip_ws(c + 1, end);
    if (*p != '{') return -1; /* a declaration */
    const char *b = close_brace(p, end);
    if (!b) return -1;
    f->body = p + 1;
    f->body_end = b;
    return 0;
  }
  return -1;
}

/* Module-level names of dm: its visible functions and globals (declared
 * .extern where a body uses them) and the others (a body that uses one
 * cannot be inlined: the link does not export it). */
typedef struct {
  char name[NAME_LEN];
  const char *decl, *decl_end; /* the definition's header, up to `{`, `;` or ` =` */
  int visible, func;
} sym_t;

static int module_syms(const char *dm, sym_t *syms, int most) {
  int n = 0;
  const char *end = dm + strlen(dm);
  for (const char *s = dm; s < end; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : end) {
    int visible = strncmp(s, ".visible ", 9) == 0;
    const char *p = visible ? s + 9 : s;
    int func = strncmp(p, ".func", 5) == 0;
    if (!func && strncmp(p, ".global", 7) != 0) continue;
    if (n >= most) return -1;
    sym_t *y = &syms[n];
    memset(y, 0, sizeof *y);
    y->visible = visible;
    y->func = func;
    y->decl = p;
    if (func) {
      const char *q = skip_ws(p + 5, end);
      if (*q == '(') q = skip_ws(close_paren(q, end) + 1, end);
      q = ident(q, end, y->name);
      q = skip_ws(q, end);
      if (*q != '(') continue;
      y->decl_end = close_paren(q, end) + 1;
    } else { /* .global .align 8 .u64 name[..] (= ...)? ; */
      const char *semi = strchr(p, ';'), *eq = strchr(p, '='), *eol = strchr(p, '\n');
      if (!semi || (eol && semi > eol)) continue;
      const char *stop = eq && eq < semi ? eq : semi;
      while (stop > p && isspace((unsigned char)stop[-1])) stop--;
      y->decl_end = stop;
      const char *q = stop;
      if (q > p && q[-1] == ']')
        while (q > p && *q != '[') q--;
      const char *e = q;
      while (q > p && id_char((unsigned char)q[-1])) q--;
      if ((size_t)(e - q) >= NAME_LEN || e == q) continue;
      memcpy(y->name, q, (size_t)(e - q));
    }
    n++;
  }
  return n;
}

/* ---- one function's body, renamed for call k ---- */
typedef struct {
  char names[MAX_NAMES][NAME_LEN]; /* registers the body declares (without %) */
  int pct[MAX_NAMES];              /* 1: a %name (ranged or not) */
  int n;
} regs_t;

static int body_regs(const char *b, const char *end, regs_t *r) {
  r->n = 0;
  for (const char *s = b; s < end && (s = strstr(s, ".reg")) && s < end; s += 4) {
    const char *q = skip_ws(s + 4, end);
    if (*q != '.') continue;
    while (q < end && !isspace((unsigned char)*q)) q++; /* .TYPE */
    for (;;) {
      q = skip_ws(q, end);
      int pct = *q == '%';
      if (pct) q++;
      if (r->n >= MAX_NAMES) return -1;
      q = ident(q, end, r->names[r->n]);
      if (!r->names[r->n][0]) return -1;
      r->pct[r->n++] = pct;
      if (*q == '<')
        while (q < end && *q != '>') q++;
      if (q < end && *q == '>') q++;
      q = skip_ws(q, end);
      if (*q != ',') break;
      q++;
    }
  }
  return 0;
}

static int reg_known(const regs_t *r, const char *name, int pct) {
  char alpha[NAME_LEN];
  size_t k = strlen(name);
  while (k > 0 && isdigit((unsigned char)name[k - 1])) k--;
  memcpy(alpha, name, k);
  alpha[k] = 0;
  for (int i = 0; i < r->n; i++)
    if (r->pct[i] == pct && (strcmp(r->names[i], name) == 0 || (pct && strcmp(r->names[i], alpha) == 0)))
      return 1;
  return 0;
}

/* The body with its registers and labels prefixed by pre. */
static void rename_body(const char *b, const char *end, const regs_t *r, const char *pre, buf_t *out) {
  const char *s = b;
  while (s < end) {
    if (s[0] == '/' && s + 1 < end && s[1] == '/') { /* comments as they are */
      const char *e = s;
      while (e < end && *e != '\n') e++;
      put(out, s, (size_t)(e - s));
      s = e;
      continue;
    }
    if ((*s == '%' || *s == '$' || isalpha((unsigned char)*s) || *s == '_') &&
        (s == b || !id_char((unsigned char)s[-1]))) {
      char name[NAME_LEN];
      const char *e = ident(*s == '%' ? s + 1 : s, end, name);
      int rename = (*s == '%' && reg_known(r, name, 1)) || (*s == '$' && strncmp(name, "$L__", 4) == 0) ||
                   (*s != '%' && *s != '$' && reg_known(r, name, 0));
      if (rename) {
        if (*s == '%') put(out, "%", 1);
        if (*s == '$') put(out, "$", 1);
        puts_(out, pre);
        puts_(out, *s == '$' ? name + 1 : name);
      } else {
        put(out, s, (size_t)(e - s));
      }
      s = e > s ? e : s + 1;
      continue;
    }
    put(out, s, 1);
    s++;
  }
}

/* ---- a call block of the application ---- */
typedef struct {
  const char *open, *close; /* its braces */
  char args[MAX_PARAMS][NAME_LEN];
  int nargs;
  char dest[NAME_LEN]; /* the register the result is loaded into ("" for none) */
} site_t;

/* The statements of the block [open, close], without comments, into st
 * (semicolon-separated, whitespace collapsed). */
static int block_text(const char *open, const char *close, char *st, size_t cap) {
  size_t k = 0;
  int space = 0;
  for (const char *s = open + 1; s < close; s++) {
    if (s[0] == '/' && s[1] == '/') {
      while (s < close && *s != '\n') s++;
      space = 1;
      continue;
    }
    if (isspace((unsigned char)*s)) {
      space = 1;
      continue;
    }
    if (k + 3 >= cap) return -1;
    if (space && k && st[k - 1] != ';' && st[k - 1] != '(' && *s != ')' && *s != ',' && st[k - 1] != ',')
      st[k++] = ' ';
    space = 0;
    st[k++] = *s;
  }
  st[k] = 0;
  return 0;
}

/* Whether the block at open is a call of exactly its parameters to
 * free, and with what (site). */
static int parse_site(const char *open, const char *close, site_t *site) {
  char st[2048];
  if (close - open > 1500 || block_text(open, close, st, sizeof st) < 0) return 0;
  char pnames[MAX_PARAMS][NAME_LEN], pvals[MAX_PARAMS][NAME_LEN], ret[NAME_LEN] = "";
  int np = 0, called = 0;
  memset(site, 0, sizeof *site);
  site->open = open;
  site->close = close;
  for (char *save = NULL, *t = strtok_r(st, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
    char a[NAME_LEN], b[NAME_LEN], c[NAME_LEN];
    int len = -1; /* %n: set only when the whole pattern matched */
    if (strcmp(t, ".reg .b32 temp_param_reg") == 0) continue;
    if (sscanf(t, ".param .b%*d %95[A-Za-z0-9_]%n", a, &len) == 1 && len == (int)strlen(t)) {
      if (np >= MAX_PARAMS || strncmp(a, "retval", 6) == 0) {
        if (strncmp(a, "retval", 6) == 0) snprintf(ret, sizeof ret, "%s", a);
        continue;
      }
      snprintf(pnames[np], NAME_LEN, "%s", a);
      pvals[np++][0] = 0;
      continue;
    }
    len = -1;
    if (sscanf(t, "st.param.b%*d [%95[^]+]+0], %95[^ ;]%n", a, b, &len) == 2 && len == (int)strlen(t)) {
      int i = 0;
      while (i < np && strcmp(pnames[i], a) != 0) i++;
      if (i == np) return 0;
      snprintf(pvals[i], NAME_LEN, "%s", b);
      continue;
    }
    len = -1;
    if (sscanf(t, "ld.param.b%*d %95[^,], [%95[^]+]+0]%n", a, b, &len) == 2 && len == (int)strlen(t)) {
      if (!ret[0] || strcmp(b, ret) != 0) return 0;
      snprintf(site->dest, NAME_LEN, "%s", a);
      continue;
    }
    if (strncmp(t, "call", 4) == 0) {
      /* call.uni free,(param0) (or with a result: call.uni (retval0),f,(param0)) */
      const char *p = t + 4;
      if (strncmp(p, ".uni", 4) == 0) p += 4;
      while (*p == ' ') p++;
      if (*p == '(') {
        p = strchr(p, ')');
        if (!p) return 0;
        p++;
        if (*p == ',') p++;
      }
      while (*p == ' ') p++;
      p = ident(p, p + strlen(p), c);
      if (strcmp(c, "free") != 0) return 0; /* malloc stays a call (ptx_inline.h) */
      if (*p == ',') p++;
      if (*p != '(') return 0;
      p++;
      site->nargs = 0;
      while (*p && *p != ')') {
        if (site->nargs >= MAX_PARAMS) return 0;
        p = ident(p, p + strlen(p), a);
        int i = 0;
        while (i < np && strcmp(pnames[i], a) != 0) i++;
        if (i == np || !pvals[i][0]) return 0;
        snprintf(site->args[site->nargs++], NAME_LEN, "%s", pvals[i]);
        if (*p == ',') p++;
      }
      called = 1;
      continue;
    }
    return 0; /* anything else: leave the call */
  }
  return called;
}

/* The body of f for a call site: renamed, its parameters moved from the
 * call's arguments, its result moved to the caller's register, `ret` a
 * branch to the end. */
static int emit_call(const func_t *f, const site_t *site, int k, buf_t *out) {
  regs_t r;
  if (site->nargs != f->nparams || body_regs(f->body, f->body_end, &r) < 0) return -1;
  char pre[32];
  snprintf(pre, sizeof pre, "dmi%d_", k);
  buf_t b = {0};
  rename_body(f->body, f->body_end, &r, pre, &b);
  if (b.oom) return -1;
  puts_(out, "{ // devmalloc: free inlined\n");
  char endl[64];
  snprintf(endl, sizeof endl, "$%send", pre);
  for (char *save = NULL, *line = strtok_r(b.p, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char ty[16], reg[NAME_LEN], arg[NAME_LEN], pred[NAME_LEN];
    int len = -1; /* %n: set only when the whole pattern matched */
    const char *t = line;
    while (isspace((unsigned char)*t)) t++;
    /* ld.param.TYPE %reg, [param]; */
    if (sscanf(t, "ld.param.%15[a-z0-9] %95[^,], [%95[^]]];%n", ty, reg, arg, &len) == 3 && len > 0) {
      int i = 0;
      while (i < f->nparams && strcmp(arg, f->params[i]) != 0) i++;
      if (i < f->nparams) {
        if (strcmp(ty, "u64") && strcmp(ty, "b64") && strcmp(ty, "s64") && strcmp(ty, "u32") &&
            strcmp(ty, "b32") && strcmp(ty, "s32"))
          goto fail;
        char line2[256];
        snprintf(line2, sizeof line2, "\tmov.%s \t%s, %s;\n", ty, reg, site->args[i]);
        puts_(out, line2);
        continue;
      }
    }
    /* st.param.TYPE [func_retval0+0], %reg; */
    len = -1;
    if (f->ret[0] && sscanf(t, "st.param.%15[a-z0-9] [%95[^]+]+0], %95[^;];%n", ty, arg, reg, &len) == 3 &&
        len > 0 && strcmp(arg, f->ret) == 0) {
      if (site->dest[0]) {
        char line2[256];
        snprintf(line2, sizeof line2, "\tmov.%s \t%s, %s;\n", ty, site->dest, reg);
        puts_(out, line2);
      }
      continue;
    }
    if (strcmp(t, "ret;") == 0 || strcmp(t, "ret.uni;") == 0) {
      putf(out, "\tbra \t%s;\n", endl, "");
      continue;
    }
    int l2 = -1;
    len = -1;
    if ((sscanf(t, "@%95s ret;%n", pred, &len) == 1 && len > 0) ||
        (sscanf(t, "@%95s ret.uni;%n", pred, &l2) == 1 && l2 > 0)) {
      putf(out, "\t@%s bra \t%s;\n", pred, endl);
      continue;
    }
    if (strstr(t, f->ret[0] ? f->ret : "\x01") || (f->nparams && strstr(t, f->params[0])) ||
        (f->nparams > 1 && strstr(t, f->params[1])))
      goto fail; /* a parameter used otherwise (its address taken) */
    puts_(out, line);
    puts_(out, "\n");
  }
  putf(out, "\t.reg .b32 \t%%%snop;\n", pre, "");
  putf(out, "%s:\n", endl, "");
  putf(out, "\tmov.u32 \t%%%snop, 0;\n", pre, "");
  puts_(out, "}");
  free(b.p);
  return 0;
fail:
  free(b.p);
  return -1;
}

/* ---- the module ---- */
static unsigned header_num(const char *ptx, const char *key, unsigned *minor) {
  const char *s = strstr(ptx, key);
  if (!s) return 0;
  s += strlen(key);
  unsigned a = (unsigned)strtoul(s, (char **)&s, 10);
  if (minor) *minor = *s == '.' ? (unsigned)strtoul(s + 1, NULL, 10) : 0;
  return a;
}

/* Whether a body uses name as a whole identifier. */
static int uses(const char *b, const char *end, const char *name) {
  size_t n = strlen(name);
  for (const char *s = b; s < end && (s = strstr(s, name)) && s < end; s += n)
    if ((s == b || !id_char((unsigned char)s[-1])) && !id_char((unsigned char)s[n])) return 1;
  return 0;
}

int dm_ptx_inline(const char *app, size_t n, const char *dm, char **out, size_t *out_len, char *why,
                  size_t whylen) {
  *out = NULL;
  *out_len = 0;
  func_t fn; /* written for calls of free: its common path (device/devmalloc.cu: dm_free_common) */
  if (find_func(dm, "dm_free_common", &fn) < 0)
    return dm_fail(-EINVAL, why, whylen, "devmalloc's PTX has no dm_free_common to inline");
  unsigned app_minor = 0, dm_minor = 0;
  unsigned app_target = header_num(app, "\n.target sm_", NULL),
           dm_target = header_num(dm, "\n.target sm_", NULL);
  unsigned app_ver = header_num(app, "\n.version ", &app_minor),
           dm_ver = header_num(dm, "\n.version ", &dm_minor);
  if (!app_target || app_target < dm_target)
    return dm_fail(-EINVAL, why, whylen, "application PTX target sm_%u below devmalloc's sm_%u", app_target,
                   dm_target);
  if (!app_ver || !dm_ver) return dm_fail(-EINVAL, why, whylen, "no .version");
  const char *addr = strstr(app, "\n.address_size");
  const char *addr_end = addr ? strchr(addr + 1, '\n') : NULL;
  const char *ver = strstr(app, "\n.version "), *ver_end = ver ? strchr(ver + 1, '\n') : NULL;
  if (!addr_end || !ver_end || ver_end > addr_end)
    return dm_fail(-EINVAL, why, whylen, "application PTX has no .version line before its .address_size");

  /* the module-level names the bodies use: declared .extern, all visible */
  enum { MOST_SYMS = 4096 };
  sym_t *syms = malloc(MOST_SYMS * sizeof *syms);
  if (!syms) return dm_fail(-ENOMEM, why, whylen, "out of memory");
  int nsyms = module_syms(dm, syms, MOST_SYMS);
  if (nsyms < 0) {
    free(syms);
    return dm_fail(-EINVAL, why, whylen, "devmalloc's PTX has too many symbols");
  }
  buf_t ext = {0};
  for (int i = 0; i < nsyms; i++) {
    /* free: the application declares it */
    if (!strcmp(syms[i].name, fn.name) || !strcmp(syms[i].name, "free") ||
        !uses(fn.body, fn.body_end, syms[i].name))
      continue;
    int rc = 0;
    if (!syms[i].visible)
      rc = dm_fail(-EINVAL, why, whylen, "dm_free_common uses %s, which is not visible", syms[i].name);
    else if (uses(app, app + n, syms[i].name))
      rc = dm_fail(-EINVAL, why, whylen, "application PTX already names %s", syms[i].name);
    if (rc < 0) {
      free(ext.p);
      free(syms);
      return rc;
    }
    puts_(&ext, ".extern ");
    put(&ext, syms[i].decl, (size_t)(syms[i].decl_end - syms[i].decl));
    puts_(&ext, ";\n");
  }
  free(syms);

  /* the call blocks */
  buf_t o = {0};
  const char *end = app + n, *copied = app;
  int sites = 0, k = 0, in_func = 0;
  const char *func_end = NULL;                               /* the `}` of the function the scan is in */
  if (app_ver * 100 + app_minor < dm_ver * 100 + dm_minor) { /* the later ISA version: a superset */
    const char *v = ver + 1, *ve = ver_end;
    put(&o, app, (size_t)(v - app));
    char line[64];
    snprintf(line, sizeof line, ".version %u.%u", dm_ver, dm_minor);
    puts_(&o, line);
    copied = ve;
  }
  put(&o, copied, (size_t)(addr_end + 1 - copied));
  put(&o, ext.p ? ext.p : "", ext.n);
  free(ext.p);
  copied = addr_end + 1;
  for (const char *s = copied; s < end; s++) {
    if (*s != '{') {
      if (s[0] == '/' && s + 1 < end && s[1] == '/')
        while (s < end && *s != '\n') s++;
      continue;
    }
    const char *c = close_brace(s, end);
    if (!c) break;
    if (!func_end || s > func_end) { /* a function's body (or an initializer) */
      func_end = c;
      in_func = 0;
      continue;
    }
    site_t site;
    if (in_func < DM_INLINE_PER_FUNC && c - s < 1500 && !memchr(s + 1, '{', (size_t)(c - s - 1)) &&
        parse_site(s, c, &site)) {
      put(&o, copied, (size_t)(s - copied));
      if (emit_call(&fn, &site, k++, &o) < 0) {
        free(o.p);
        return dm_fail(-EINVAL, why, whylen, "dm_free_common's body cannot be inlined");
      }
      copied = c + 1;
      s = c;
      sites++;
      in_func++;
    }
  }
  if (!sites) {
    free(o.p);
    return 0;
  }
  put(&o, copied, (size_t)(end - copied));
  if (o.oom) {
    free(o.p);
    return dm_fail(-ENOMEM, why, whylen, "out of memory");
  }
  *out = o.p;
  *out_len = o.n;
  return sites;
}
