// plugin.h — the program (plugin_main.cu + particles.cu, device code in two
// -rdc translation units) and a shared library (libcorpus_plugin.so,
// plugin_lib.cu) with its own device code, both allocating on the device.
#pragma once
#include <cstdint>

struct Particle {
  int x, y, vx, vy;
};

// particles.cu
__device__ Particle *spawn_particles(int cell, int *count);
__global__ void step_cells(int ncells, int steps, long long *energy, int *nulls);

// libcorpus_plugin.so: built with hidden visibility, exports only its API
#define PLUGIN_API extern "C" __attribute__((visibility("default")))
PLUGIN_API int plugin_histogram(const int *d_values, int n, unsigned long long *h_result);
