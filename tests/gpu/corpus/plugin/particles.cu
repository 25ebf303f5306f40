// particles.cu — per-cell particle buffers, allocated in one translation unit
// and used in another.
#include "plugin.h"

__device__ Particle *spawn_particles(int cell, int *count) {
  int n = 1 + (cell * 37) % 29;
  Particle *p = (Particle *)malloc(n * sizeof(Particle));
  if (!p) return nullptr;
  for (int i = 0; i < n; i++) p[i] = {cell * 3 + i, cell - i, (i % 5) - 2, (cell % 7) - 3};
  *count = n;
  return p;
}
