// plugin_main.cu — steps particles per cell (a new buffer every step: the
// survivors are copied, the old buffer freed) and hands the final energies
// to the plugin library for a histogram.
#include <vector>
#include "../corpus.h"
#include "plugin.h"

__global__ void step_cells(int ncells, int steps, long long *energy, int *nulls) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= ncells) return;
  int n = 0;
  Particle *p = spawn_particles(c, &n);
  if (!p) {
    atomicAdd(nulls, 1);
    return;
  }
  for (int s = 0; s < steps; s++) {
    int alive = 0;
    for (int i = 0; i < n; i++) alive += (p[i].x + p[i].y + s) % 11 != 0;
    Particle *q = (Particle *)malloc((alive ? alive : 1) * sizeof(Particle));
    if (!q) {
      atomicAdd(nulls, 1);
      break;
    }
    int k = 0;
    for (int i = 0; i < n; i++)
      if ((p[i].x + p[i].y + s) % 11 != 0)
        q[k++] = {p[i].x + p[i].vx, p[i].y + p[i].vy, p[i].vx, p[i].vy + 1};
    free(p);
    p = q;
    n = alive;
  }
  long long e = 0;
  for (int i = 0; i < n; i++) e += (long long)p[i].vx * p[i].vx + (long long)p[i].vy * p[i].vy + p[i].x;
  free(p);
  energy[c] = e;
}

__global__ void to_values(const long long *e, int *v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = (int)(e[i] & 0x7fffffff);
}

static long long ref_energy(int c, int steps) {
  int n = 1 + (c * 37) % 29;
  std::vector<Particle> p(n);
  for (int i = 0; i < n; i++) p[i] = {c * 3 + i, c - i, (i % 5) - 2, (c % 7) - 3};
  for (int s = 0; s < steps; s++) {
    std::vector<Particle> q;
    for (auto &a : p)
      if ((a.x + a.y + s) % 11 != 0) q.push_back({a.x + a.vx, a.y + a.vy, a.vx, a.vy + 1});
    p.swap(q);
  }
  long long e = 0;
  for (auto &a : p) e += (long long)a.vx * a.vx + (long long)a.vy * a.vy + a.x;
  return e;
}

int main() {
  bool small = corpus_small();
  int ncells = small ? 4096 : 65536, steps = 12;
  corpus_heap_init(256u << 20);
  CK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 256u << 20));
  long long *energy;
  int *nulls, *values;
  CK(cudaMallocManaged(&energy, ncells * sizeof(long long)));
  CK(cudaMallocManaged(&nulls, sizeof(int)));
  CK(cudaMalloc(&values, ncells * sizeof(int)));
  *nulls = 0;
  step_cells<<<(ncells + 127) / 128, 128>>>(ncells, steps, energy, nulls);
  CK(cudaGetLastError());
  to_values<<<(ncells + 255) / 256, 256>>>(energy, values, ncells);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  unsigned long long hist[2] = {0, 0};
  int prc = plugin_histogram(values, ncells, hist);
  int rc = 0, bad = 0;
  if (*nulls) {
    fprintf(stderr, "plugin: %d NULL in the program\n", *nulls);
    rc = 1;
  }
  if (prc) {
    fprintf(stderr, "plugin: the library failed (%d)\n", prc);
    rc = 1;
  }
  unsigned long long want[2] = {0, 0};
  for (int c = 0; c < ncells; c++) {
    long long e = ref_energy(c, steps);
    bad += e != energy[c];
    int v = (int)(e & 0x7fffffff);
    // what the library computes: per value, a buffer of (v % 64 + 1) ints from malloc
    unsigned long long s = 0;
    for (int k = 0; k <= v % 64; k++) s += (unsigned long long)(v + k) * (k + 1);
    want[0] += s;
    want[1] += (unsigned long long)(v % 64 + 1);
  }
  if (bad) {
    fprintf(stderr, "plugin: %d wrong energies\n", bad);
    rc = 1;
  }
  if (hist[0] != want[0] || hist[1] != want[1]) {
    fprintf(stderr, "plugin: library result %llu/%llu, want %llu/%llu\n", hist[0], hist[1], want[0], want[1]);
    rc = 1;
  }
  Digest d;
  d.bytes(energy, ncells * sizeof(long long));
  d.add(hist[0]);
  d.add(hist[1]);
  fprintf(stderr, "plugin: %d cells\n", ncells);
  corpus_result("plugin", d);
  return rc;
}
