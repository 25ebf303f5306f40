/*
 * elf_lazy.c — libelf for the shim, loaded on first use.
 *
 * The shim reads device images with libelf (cubin_elf.c, image_scan.c,
 * relink.c), but a process the shim is preloaded into may never touch CUDA:
 * it must not get libelf (and the zlib behind it) mapped for nothing. So the
 * shim does not link libelf; this file defines, hidden inside the shim, the
 * libelf functions those files call. The first call dlopens libelf.so.1 and
 * fills a table of the real functions (the list: DM_ELF_FNS below); a
 * process without libelf gets libelf's own failure values (EV_NONE, NULL,
 * -1) and one warning. The host tests link the real libelf instead.
 *
 * May call: real_dlsym.c, options/ (the log).
 *
 * Locking: the table is filled once under pthread_once; read-only after.
 */
#include "shim.h"

#include <dlfcn.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>

/* X(return type, name, parameters, arguments, value when libelf is absent) */
#define DM_ELF_FNS(X)                                                              \
  X(unsigned, elf_version, (unsigned v), (v), EV_NONE)                             \
  X(Elf *, elf_memory, (char *image, size_t size), (image, size), NULL)            \
  X(int, elf_end, (Elf * e), (e), 0)                                               \
  X(const char *, elf_errmsg, (int err), (err), "libelf.so.1 could not be loaded") \
  X(Elf_Data *, elf_getdata, (Elf_Scn * s, Elf_Data * d), (s, d), NULL)            \
  X(Elf_Kind, elf_kind, (Elf * e), (e), ELF_K_NONE)                                \
  X(Elf_Scn *, elf_nextscn, (Elf * e, Elf_Scn * s), (e, s), NULL)                  \
  X(char *, elf_strptr, (Elf * e, size_t i, size_t o), (e, i, o), NULL)            \
  X(GElf_Ehdr *, gelf_getehdr, (Elf * e, GElf_Ehdr * d), (e, d), NULL)             \
  X(GElf_Shdr *, gelf_getshdr, (Elf_Scn * s, GElf_Shdr * d), (s, d), NULL)         \
  X(GElf_Sym *, gelf_getsym, (Elf_Data * d, int i, GElf_Sym *s), (d, i, s), NULL)

static struct {
#define X(ret, name, params, args, none) ret(*name) params;
  DM_ELF_FNS(X)
#undef X
} g_elf;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void load(void) {
  void *h = dlopen("libelf.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!h) {
    dm_log(DM_LOG_WARN,
           "warning: libelf.so.1 could not be loaded (%s): device images "
           "cannot be read, modules load unchanged",
           dlerror());
    return;
  }
#define X(ret, name, params, args, none) g_elf.name = (ret(*) params)dm_real_dlsym(h, #name);
  DM_ELF_FNS(X)
#undef X
}

#define X(ret, name, params, args, none)               \
  ret name params {                                    \
    pthread_once(&g_once, load);                       \
    return g_elf.name ? g_elf.name args : (ret)(none); \
  }
DM_ELF_FNS(X)
#undef X
