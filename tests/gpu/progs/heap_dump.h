/* heap_dump.h — print a heap's metadata state (heap_dump.c; host only). */
#ifndef HEAP_DUMP_H
#define HEAP_DUMP_H
#include <stdio.h>
#include "dm_types.h"
#ifdef __cplusplus
extern "C" {
#endif
void dm_heap_dump(const dm_heap_t *h, FILE *f);
#ifdef __cplusplus
}
#endif
#endif
