// polyobj.cu — per-thread device `new` of polymorphic objects: every thread
// creates a shape (a polygon also `new`s its vertex array), a second kernel
// calls its virtual functions and replaces it by a scaled clone, a third
// deletes it through the base pointer. A few threads printf between their
// allocations. Integer geometry, so results are exact.
#include <vector>
#include "corpus.h"

class Shape {
public:
  __device__ virtual ~Shape() {}
  __device__ virtual long long area2() const = 0;       // twice the area
  __device__ virtual long long perimeter1() const = 0;  // L1 perimeter
  __device__ virtual Shape *scaled(int f) const = 0;
  __device__ virtual const char *name() const = 0;
};
class Rect : public Shape {
  int w, h;

public:
  __device__ Rect(int w_, int h_) : w(w_), h(h_) {}
  __device__ long long area2() const override { return 2ll * w * h; }
  __device__ long long perimeter1() const override { return 2ll * (w + h); }
  __device__ Shape *scaled(int f) const override { return new Rect(w * f, h * f); }
  __device__ const char *name() const override { return "rect"; }
};
class Triangle : public Shape {
  int b, h;

public:
  __device__ Triangle(int b_, int h_) : b(b_), h(h_) {}
  __device__ long long area2() const override { return 1ll * b * h; }
  __device__ long long perimeter1() const override { return 2ll * b + 2ll * h; }
  __device__ Shape *scaled(int f) const override { return new Triangle(b * f, h * f); }
  __device__ const char *name() const override { return "triangle"; }
};
class Polygon : public Shape {
  int n;
  int2 *v;

public:
  __device__ Polygon(int n_, unsigned seed) : n(n_), v(new int2[n_]) {
    // a star-shaped polygon: radius varies, angles from a fixed table of directions
    const int dx[8] = {10, 7, 0, -7, -10, -7, 0, 7}, dy[8] = {0, 7, 10, 7, 0, -7, -10, -7};
    if (v)
      for (int i = 0; i < n; i++) {
        int r = 1 + hash32(seed + i) % 9;
        v[i] = make_int2(dx[i % 8] * r, dy[i % 8] * r);
      }
  }
  __device__ Polygon(const Polygon &o, int f) : n(o.n), v(new int2[o.n]) {
    if (v)
      for (int i = 0; i < n; i++) v[i] = make_int2(o.v[i].x * f, o.v[i].y * f);
  }
  __device__ ~Polygon() override { delete[] v; }
  __device__ bool ok() const { return v != nullptr; }
  __device__ long long area2() const override {
    long long s = 0;
    for (int i = 0; i < n; i++) {
      int2 a = v[i], b = v[(i + 1) % n];
      s += 1ll * a.x * b.y - 1ll * b.x * a.y;
    }
    return s < 0 ? -s : s;
  }
  __device__ long long perimeter1() const override {
    long long s = 0;
    for (int i = 0; i < n; i++) {
      int2 a = v[i], b = v[(i + 1) % n];
      s += llabs(a.x - b.x) + llabs(a.y - b.y);
    }
    return s;
  }
  __device__ Shape *scaled(int f) const override { return new Polygon(*this, f); }
  __device__ const char *name() const override { return "polygon"; }
};

__device__ Shape *make_shape(unsigned i) {
  unsigned r = hash32(i);
  switch (i % 3) {
  case 0: return new Rect(1 + r % 50, 1 + (r >> 8) % 50);
  case 1: return new Triangle(1 + r % 40, 1 + (r >> 8) % 40);
  default: {
    Polygon *p = new Polygon(8 * (1 + r % 4), r);
    if (p && !p->ok()) {
      delete p;
      return nullptr;
    }
    return p;
  }
  }
}

__global__ void create(Shape **objs, int n, int *fail) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Shape *s = make_shape(i);
  if (!s) {
    atomicAdd(fail, 1);
    objs[i] = nullptr;
    return;
  }
  if (i % 8191 == 0) printf("polyobj: object %d is a %s with area2 %lld\n", i, s->name(), s->area2());
  objs[i] = s;
}

__global__ void rescale(Shape **objs, int n, long long *before, long long *after, int *fail) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n || !objs[i]) return;
  Shape *s = objs[i];
  before[i] = s->area2() * 1000003ll + s->perimeter1();
  Shape *t = s->scaled(1 + i % 3);
  if (!t) {
    atomicAdd(fail, 1);
    return;
  }
  delete s;
  if (i % 8191 == 0)
    printf("polyobj: object %d scaled by %d: perimeter %lld\n", i, 1 + i % 3, t->perimeter1());
  after[i] = t->area2() * 1000003ll + t->perimeter1();
  objs[i] = t;
}

__global__ void destroy(Shape **objs, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    delete objs[i];
    objs[i] = nullptr;
  }
}

int main() {
  int n = corpus_small() ? 16384 : 262144;
  corpus_heap_init(128u << 20);
  CK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 128u << 20));
  Shape **objs;
  long long *before, *after;
  int *fail;
  CK(cudaMalloc(&objs, n * sizeof(Shape *)));
  CK(cudaMallocManaged(&before, n * sizeof(long long)));
  CK(cudaMallocManaged(&after, n * sizeof(long long)));
  CK(cudaMallocManaged(&fail, sizeof(int)));
  *fail = 0;
  int tb = 256, nb = (n + tb - 1) / tb;
  create<<<nb, tb>>>(objs, n, fail);
  CK(cudaGetLastError());
  rescale<<<nb, tb>>>(objs, n, before, after, fail);
  CK(cudaGetLastError());
  destroy<<<nb, tb>>>(objs, n);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  if (*fail) {
    fprintf(stderr, "polyobj: %d allocations failed\n", *fail);
    return 1;
  }
  // Scaling by f multiplies area2 by f^2 and the perimeter by f.
  int bad = 0;
  for (int i = 0; i < n; i++) {
    long long f = 1 + i % 3, a = before[i] / 1000003ll, p = before[i] % 1000003ll;
    if (a <= 0 || p <= 0 || after[i] != a * f * f * 1000003ll + p * f) {
      if (bad++ < 5) fprintf(stderr, "polyobj: object %d: before %lld after %lld\n", i, before[i], after[i]);
    }
  }
  Digest d;
  d.bytes(before, n * sizeof(long long));
  d.bytes(after, n * sizeof(long long));
  fprintf(stderr, "polyobj: %d objects, %d inconsistent\n", n, bad);
  corpus_result("polyobj", d);
  return bad ? 1 : 0;
}
