/*
 * ptx_scan.c — token-level PTX scan. See ptx_scan.h. Locking: none.
 */
#include "ptx_scan.h"
#include "cubin_elf.h"
#include "relink_err.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *p, *end;
} lexer_t;

static int ident_char(int c) { return isalnum(c) || c == '_' || c == '$' || c == '.' || c == '%'; }

/* Next token into tok (truncated to cap-1); returns its length, 0 at end. */
static size_t next_token(lexer_t *lx, char *tok, size_t cap) {
  for (;;) {
    while (lx->p < lx->end && *lx->p && isspace((unsigned char)*lx->p)) lx->p++;
    if (lx->p >= lx->end || !*lx->p) return 0;
    if (lx->end - lx->p >= 2 && lx->p[0] == '/' && lx->p[1] == '/') {
      while (lx->p < lx->end && *lx->p && *lx->p != '\n') lx->p++;
      continue;
    }
    if (lx->end - lx->p >= 2 && lx->p[0] == '/' && lx->p[1] == '*') {
      lx->p += 2;
      while (lx->p < lx->end && *lx->p && !(lx->end - lx->p >= 2 && lx->p[0] == '*' && lx->p[1] == '/'))
        lx->p++;
      lx->p = lx->end - lx->p >= 2 ? lx->p + 2 : lx->end;
      continue;
    }
    break;
  }
  size_t n = 0;
  if (*lx->p == '"') { /* string: one opaque token */
    lx->p++;
    while (lx->p < lx->end && *lx->p && *lx->p != '"') lx->p++;
    if (lx->p < lx->end && *lx->p == '"') lx->p++;
    tok[0] = '"';
    tok[1] = 0;
    return 1;
  }
  if (!ident_char((unsigned char)*lx->p)) {
    tok[0] = *lx->p++;
    tok[1] = 0;
    return 1;
  }
  while (lx->p < lx->end && *lx->p && ident_char((unsigned char)*lx->p)) {
    if (n + 1 < cap) tok[n++] = *lx->p;
    lx->p++;
  }
  tok[n] = 0;
  return n;
}

enum { SYM_NONE, SYM_MALLOC, SYM_FREE, SYM_ALIGNED };

static int sym_of(const char *t) {
  if (!strcmp(t, "malloc")) return SYM_MALLOC;
  if (!strcmp(t, "free")) return SYM_FREE;
  if (!strcmp(t, "__cuda_syscall_aligned_malloc") || !strcmp(t, "__nv_aligned_device_malloc_impl") ||
      !strcmp(t, "__nv_aligned_device_malloc"))
    return SYM_ALIGNED;
  return SYM_NONE;
}

static void note_func(dm_ptx_info_t *in, int sym, int ext) {
  int *ex[] = {NULL, &in->extern_malloc, &in->extern_free, &in->extern_aligned};
  int *df[] = {NULL, &in->defines_malloc, &in->defines_free, &in->defines_aligned};
  *(ext ? ex[sym] : df[sym]) = 1;
}

int dm_ptx_scan(const char *ptx, size_t len, dm_ptx_info_t *info) {
  memset(info, 0, sizeof *info);
  if (!ptx) return -EINVAL;
  lexer_t lx = {ptx, ptx + len};
  char tok[128], prev[128] = "";
  int brace = 0, paren = 0;
  int st_extern = 0, st_func = 0, st_named = 0; /* current top-level statement */
  while (next_token(&lx, tok, sizeof tok)) {
    if (brace == 0) {
      if (!strcmp(prev, ".version")) {
        char *dot = NULL;
        info->version_major = (unsigned)strtoul(tok, &dot, 10);
        if (dot && *dot == '.') info->version_minor = (unsigned)strtoul(dot + 1, NULL, 10);
      } else if (!strcmp(prev, ".target") && !strncmp(tok, "sm_", 3)) {
        info->target_sm = (unsigned)strtoul(tok + 3, NULL, 10);
      }
    }
    if (!strcmp(tok, "{")) {
      brace++;
    } else if (!strcmp(tok, "}")) {
      if (brace > 0 && --brace == 0) st_extern = st_func = st_named = 0, paren = 0;
    } else if (brace == 0) {
      if (!strcmp(tok, ";")) {
        st_extern = st_func = st_named = 0;
        paren = 0;
      } else if (!strcmp(tok, "(")) {
        paren++;
      } else if (!strcmp(tok, ")")) {
        if (paren > 0) paren--;
      } else if (!strcmp(tok, ".extern")) {
        st_extern = 1;
      } else if (!strcmp(tok, ".func")) {
        st_func = 1;
      } else if (!strcmp(tok, "devmalloc_heap_desc")) {
        info->has_heap_desc = 1;
      } else if (st_func && !st_named && paren == 0 && tok[0] != '.') {
        int sym = sym_of(tok);
        st_named = 1; /* first name after .func */
        if (dm_is_devrt_symbol(tok)) *(st_extern ? &info->extern_devrt : &info->defines_devrt) = 1;
        if (sym != SYM_NONE) note_func(info, sym, st_extern);
      }
    }
    memcpy(prev, tok, sizeof prev);
  }
  return 0;
}
