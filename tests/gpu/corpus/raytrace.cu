// raytrace.cu — a small path tracer: a random scene of spheres is built by one
// thread with device `new` (each sphere `new`s its material), rendered by a
// 2-D grid that calls virtual hit()/scatter(), and deleted by one thread.
// Prints a digest of the 8-bit image. Built with -fmad=false so that every
// build of it computes bit-identical pixels.
#include <cfloat>
#include <vector>
#include <curand_kernel.h>
#include "corpus.h"

struct vec3 {
  float x, y, z;
  __host__ __device__ vec3() : x(0), y(0), z(0) {}
  __host__ __device__ vec3(float a, float b, float c) : x(a), y(b), z(c) {}
  __device__ vec3 operator+(const vec3 &o) const { return vec3(x + o.x, y + o.y, z + o.z); }
  __device__ vec3 operator-(const vec3 &o) const { return vec3(x - o.x, y - o.y, z - o.z); }
  __device__ vec3 operator*(const vec3 &o) const { return vec3(x * o.x, y * o.y, z * o.z); }
  __device__ vec3 operator*(float t) const { return vec3(x * t, y * t, z * t); }
  __device__ vec3 operator-() const { return vec3(-x, -y, -z); }
  __device__ float len() const { return sqrtf(x * x + y * y + z * z); }
  __device__ vec3 unit() const { return *this * (1.0f / len()); }
};
__device__ float dot(const vec3 &a, const vec3 &b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
__device__ vec3 cross(const vec3 &a, const vec3 &b) {
  return vec3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
struct ray {
  vec3 o, d;
  __device__ ray() {}
  __device__ ray(const vec3 &a, const vec3 &b) : o(a), d(b) {}
  __device__ vec3 at(float t) const { return o + d * t; }
};

#define RND (curand_uniform(st))
__device__ vec3 random_in_unit_sphere(curandState *st) {
  vec3 p;
  do { p = vec3(RND, RND, RND) * 2.0f - vec3(1, 1, 1); } while (dot(p, p) >= 1.0f);
  return p;
}

class material;
struct hit_record {
  float t;
  vec3 p, n;
  material *mat;
};

class material {
public:
  __device__ virtual ~material() {}
  __device__ virtual bool scatter(const ray &in, const hit_record &h, vec3 &att, ray &out,
                                  curandState *st) const = 0;
};
class lambertian : public material {
  vec3 albedo;

public:
  __device__ lambertian(const vec3 &a) : albedo(a) {}
  __device__ bool scatter(const ray &, const hit_record &h, vec3 &att, ray &out,
                          curandState *st) const override {
    out = ray(h.p, h.n + random_in_unit_sphere(st));
    att = albedo;
    return true;
  }
};
class metal : public material {
  vec3 albedo;
  float fuzz;

public:
  __device__ metal(const vec3 &a, float f) : albedo(a), fuzz(f < 1 ? f : 1) {}
  __device__ bool scatter(const ray &in, const hit_record &h, vec3 &att, ray &out,
                          curandState *st) const override {
    vec3 u = in.d.unit();
    vec3 refl = u - h.n * (2.0f * dot(u, h.n));
    out = ray(h.p, refl + random_in_unit_sphere(st) * fuzz);
    att = albedo;
    return dot(out.d, h.n) > 0;
  }
};
class dielectric : public material {
  float ir;

public:
  __device__ dielectric(float i) : ir(i) {}
  __device__ bool scatter(const ray &in, const hit_record &h, vec3 &att, ray &out,
                          curandState *st) const override {
    att = vec3(1, 1, 1);
    vec3 u = in.d.unit();
    bool front = dot(u, h.n) < 0;
    vec3 n = front ? h.n : -h.n;
    float eta = front ? 1.0f / ir : ir;
    float c = fminf(dot(-u, n), 1.0f), s2 = 1.0f - c * c;
    float r0 = (1 - ir) / (1 + ir);
    r0 = r0 * r0;
    float schlick = r0 + (1 - r0) * powf(1 - c, 5);
    if (eta * eta * s2 > 1.0f || schlick > RND)
      out = ray(h.p, u - n * (2.0f * dot(u, n)));
    else {
      vec3 perp = (u + n * c) * eta;
      vec3 par = n * -sqrtf(fabsf(1.0f - dot(perp, perp)));
      out = ray(h.p, perp + par);
    }
    return true;
  }
};

enum { LAMB, METAL, GLASS };
class hittable {
public:
  __device__ virtual ~hittable() {}
  __device__ virtual bool hit(const ray &r, float tmin, float tmax, hit_record &h) const = 0;
};
class sphere : public hittable {
  vec3 c;
  float r;
  material *mat;

public:
  __device__ sphere(const vec3 &cen, float rad, int kind, const vec3 &col, float param) : c(cen), r(rad) {
    if (kind == LAMB)
      mat = new lambertian(col);
    else if (kind == METAL)
      mat = new metal(col, param);
    else
      mat = new dielectric(param);
  }
  __device__ ~sphere() override { delete mat; }
  __device__ bool ok() const { return mat != nullptr; }
  __device__ bool hit(const ray &ra, float tmin, float tmax, hit_record &h) const override {
    vec3 oc = ra.o - c;
    float a = dot(ra.d, ra.d), hb = dot(oc, ra.d), cc = dot(oc, oc) - r * r;
    float disc = hb * hb - a * cc;
    if (disc < 0) return false;
    float sq = sqrtf(disc), t = (-hb - sq) / a;
    if (t < tmin || t > tmax) {
      t = (-hb + sq) / a;
      if (t < tmin || t > tmax) return false;
    }
    h.t = t;
    h.p = ra.at(t);
    h.n = (h.p - c) * (1.0f / r);
    h.mat = mat;
    return true;
  }
};
class hittable_list : public hittable {
  hittable **items;
  int n;

public:
  __device__ hittable_list(hittable **l, int k) : items(l), n(k) {}
  __device__ ~hittable_list() override {
    for (int i = 0; i < n; i++) delete items[i];
    delete[] items;
  }
  __device__ int size() const { return n; }
  __device__ bool hit(const ray &r, float tmin, float tmax, hit_record &h) const override {
    hit_record tmp;
    bool any = false;
    float best = tmax;
    for (int i = 0; i < n; i++)
      if (items[i]->hit(r, tmin, best, tmp)) {
        any = true;
        best = tmp.t;
        h = tmp;
      }
    return any;
  }
};
class camera {
  vec3 origin, corner, horiz, vert;

public:
  __device__ camera(vec3 from, vec3 at, vec3 up, float vfov, float aspect) {
    float hh = tanf(vfov * 3.14159265f / 360.0f), hw = aspect * hh;
    vec3 w = (from - at).unit(), u = cross(up, w).unit(), v = cross(w, u);
    origin = from;
    corner = origin - u * hw - v * hh - w;
    horiz = u * (2 * hw);
    vert = v * (2 * hh);
  }
  __device__ ray get_ray(float s, float t) const {
    return ray(origin, corner + horiz * s + vert * t - origin);
  }
};

__global__ void create_world(hittable **world, camera **cam, int grid, float aspect, int *err) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  curandState local;
  curandState *st = &local;
  curand_init(1984, 0, 0, st);
  int cap = 4 * grid * grid + 4, i = 0;
  hittable **list = new hittable *[cap];
  if (!list) {
    *err = 1;
    return;
  }
  list[i++] = new sphere(vec3(0, -1000, -1), 1000, LAMB, vec3(0.5f, 0.5f, 0.5f), 0);
  for (int a = -grid; a < grid; a++)
    for (int b = -grid; b < grid; b++) {
      float choose = RND;
      vec3 cen(a + RND, 0.2f, b + RND);
      if (choose < 0.8f)
        list[i++] = new sphere(cen, 0.2f, LAMB, vec3(RND * RND, RND * RND, RND * RND), 0);
      else if (choose < 0.95f)
        list[i++] = new sphere(cen, 0.2f, METAL, vec3(0.5f * (1 + RND), 0.5f * (1 + RND), 0.5f * (1 + RND)),
                               0.5f * RND);
      else
        list[i++] = new sphere(cen, 0.2f, GLASS, vec3(), 1.5f);
    }
  list[i++] = new sphere(vec3(0, 1, 0), 1.0f, GLASS, vec3(), 1.5f);
  list[i++] = new sphere(vec3(-4, 1, 0), 1.0f, LAMB, vec3(0.4f, 0.2f, 0.1f), 0);
  list[i++] = new sphere(vec3(4, 1, 0), 1.0f, METAL, vec3(0.7f, 0.6f, 0.5f), 0.0f);
  for (int k = 0; k < i; k++)
    if (!list[k] || !static_cast<sphere *>(list[k])->ok()) *err = 2;
  *world = new hittable_list(list, i);
  *cam = new camera(vec3(13, 2, 3), vec3(0, 0, 0), vec3(0, 1, 0), 30.0f, aspect);
  if (!*world || !*cam) *err = 3;
}

__device__ vec3 trace(const ray &r0, hittable **world, curandState *st, int depth) {
  ray cur = r0;
  vec3 att(1, 1, 1);
  for (int i = 0; i < depth; i++) {
    hit_record h;
    if ((*world)->hit(cur, 0.001f, FLT_MAX, h)) {
      ray sc;
      vec3 a;
      if (!h.mat->scatter(cur, h, a, sc, st)) return vec3();
      att = att * a;
      cur = sc;
    } else {
      float t = 0.5f * (cur.d.unit().y + 1.0f);
      return att * (vec3(1, 1, 1) * (1.0f - t) + vec3(0.5f, 0.7f, 1.0f) * t);
    }
  }
  return vec3();
}

__global__ void render(vec3 *fb, int nx, int ny, int spp, camera **cam, hittable **world) {
  int i = threadIdx.x + blockIdx.x * blockDim.x, j = threadIdx.y + blockIdx.y * blockDim.y;
  if (i >= nx || j >= ny) return;
  int pix = j * nx + i;
  curandState local;
  curandState *st = &local;
  curand_init(1984 + pix, 0, 0, st);
  vec3 col;
  for (int s = 0; s < spp; s++) {
    float u = (i + RND) / float(nx), v = (j + RND) / float(ny);
    col = col + trace((*cam)->get_ray(u, v), world, st, 16);
  }
  col = col * (1.0f / spp);
  fb[pix] = vec3(sqrtf(col.x), sqrtf(col.y), sqrtf(col.z));
}

__global__ void free_world(hittable **world, camera **cam, int *count) {
  *count = static_cast<hittable_list *>(*world)->size();
  delete *world;
  delete *cam;
}

int main() {
  bool small = corpus_small();
  int nx = small ? 64 : 256, ny = small ? 36 : 144, spp = small ? 1 : 4, grid = small ? 4 : 16;
  corpus_heap_init(64u << 20);
  vec3 *fb;
  hittable **world;
  camera **cam;
  int *err, *count;
  CK(cudaMallocManaged(&fb, nx * ny * sizeof(vec3)));
  CK(cudaMalloc(&world, sizeof(hittable *)));
  CK(cudaMalloc(&cam, sizeof(camera *)));
  CK(cudaMallocManaged(&err, sizeof(int)));
  CK(cudaMallocManaged(&count, sizeof(int)));
  *err = 0;
  *count = 0;
  create_world<<<1, 1>>>(world, cam, grid, float(nx) / ny, err);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  if (*err) {
    fprintf(stderr, "raytrace: scene allocation failed (%d)\n", *err);
    return 1;
  }
  dim3 threads(8, 8), blocks((nx + 7) / 8, (ny + 7) / 8);
  render<<<blocks, threads>>>(fb, nx, ny, spp, cam, world);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  free_world<<<1, 1>>>(world, cam, count);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());

  Digest d;
  long long sum = 0;
  for (int p = 0; p < nx * ny; p++) {
    unsigned char rgb[3] = {(unsigned char)(255.99f * fminf(fb[p].x, 1.0f)),
                            (unsigned char)(255.99f * fminf(fb[p].y, 1.0f)),
                            (unsigned char)(255.99f * fminf(fb[p].z, 1.0f))};
    d.bytes(rgb, 3);
    sum += rgb[0] + rgb[1] + rgb[2];
  }
  int want = 4 * grid * grid + 4;
  fprintf(stderr, "raytrace: %dx%d, %d objects, mean %.2f\n", nx, ny, *count, sum / (3.0 * nx * ny));
  if (*count != want) {
    fprintf(stderr, "raytrace: %d objects, want %d\n", *count, want);
    return 1;
  }
  if (sum < 20ll * nx * ny) {
    fprintf(stderr, "raytrace: image is (nearly) black\n");
    return 1;
  }
  char extra[64];
  snprintf(extra, sizeof extra, "objects=%d", *count);
  d.add(*count);
  corpus_result("raytrace", d, extra);
  CK(cudaFree(fb));
  CK(cudaFree(world));
  CK(cudaFree(cam));
  CK(cudaFree(err));
  CK(cudaFree(count));
  return 0;
}
