/*
 * stats_print.c — human-readable summary of devmalloc_stats_t.
 * Locking: none.
 */
#include <stdio.h>
#include "devmalloc.h"

static double mib(uint64_t b) { return (double)b / 1048576.0; }

void devmalloc_stats_print(const devmalloc_stats_t *s, void *file, const char *title) {
  FILE *f = file ? (FILE *)file : stderr;
  fprintf(f, "devmalloc stats%s%s: heap %.1f MiB (pool %.1f MiB)\n", title ? " " : "", title ? title : "",
          mib(s->heap_bytes), mib(s->pool_bytes));
  if (s->grows)
    fprintf(f,
            "  grows: %.1f MiB mapped now, peak %.1f MiB, max pool %.1f MiB; %llu growths, "
            "%llu waits (%llu ended without memory), %llu trims (%.1f MiB)\n",
            mib(s->mapped_bytes), mib(s->mapped_peak), mib(s->max_bytes),
            (unsigned long long)s->growth_events, (unsigned long long)s->grow_waits,
            (unsigned long long)s->grow_timeouts, (unsigned long long)s->trims, mib(s->trimmed_bytes));
  fprintf(f, "  allocations %llu, frees %llu, failures (NULL) %llu\n", (unsigned long long)s->allocs,
          (unsigned long long)s->frees, (unsigned long long)s->failures);
  fprintf(f, "  double frees %llu, foreign frees %llu\n", (unsigned long long)s->double_frees,
          (unsigned long long)s->foreign_frees);
  if (s->check_failures)
    fprintf(f, "  check: %llu block(s) written past their end, first at 0x%llx (%llu bytes asked)\n",
            (unsigned long long)s->check_failures, (unsigned long long)s->check_first_bad,
            (unsigned long long)s->check_first_size);
  fprintf(f, "  bytes in use %.3f MiB, footprint %.3f MiB, peak footprint %.3f MiB, large blocks %llu\n",
          mib(s->bytes_in_use), mib(s->footprint_bytes), mib(s->peak_bytes),
          (unsigned long long)s->large_allocs);
  fprintf(f, "  per size class:");
  int any = 0;
  for (int c = 0; c < DEVMALLOC_NUM_CLASSES; c++) {
    if (!s->class_allocs[c]) continue;
    fprintf(f, " %lluB:%llu", (unsigned long long)s->class_size[c], (unsigned long long)s->class_allocs[c]);
    any = 1;
  }
  fprintf(f, "%s\n", any ? "" : " none");
}
