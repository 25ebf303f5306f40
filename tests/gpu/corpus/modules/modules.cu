// modules.cu — a driver-API program that loads its kernels at run time:
//  - modules_kern.ptx with cuModuleLoad (kernel fill_sum) and, read into
//    memory, with cuModuleLoadDataEx and JIT options (kernel list_sum);
//  - a kernel compiled by NVRTC to PTX (loaded with cuModuleLoadData) and
//    the same kernel compiled by NVRTC to an sm_90 cubin.
// Built with -DLINK_DEVMALLOC (the "relinked" build), the program links each
// PTX with devmalloc's device code (devmalloc.ptx beside its directory)
// through cuLink* before loading it; the NVRTC cubin is loaded as it is.
#include <cuda.h>
#include <nvrtc.h>
#include <unistd.h>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include "../corpus.h"
#include "../../progs/cu_ck.h"

#define RTC(x)                                                                             \
  do {                                                                                     \
    nvrtcResult r_ = (x);                                                                  \
    if (r_ != NVRTC_SUCCESS) {                                                             \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, nvrtcGetErrorString(r_)); \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)

static const char *rtc_src = R"(
extern "C" __global__ void rtc_sum(int n, int salt, unsigned long long *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  int len = 4 + (t + salt) % 29;
  unsigned long long *buf = (unsigned long long *)malloc(len * sizeof(unsigned long long));
  if (!buf) { out[t] = ~0ull; return; }
  for (int i = 0; i < len; i++) buf[i] = (unsigned long long)(t + 1) * (i + salt);
  unsigned long long s = 0;
  for (int i = 0; i < len; i++) s += buf[i];
  free(buf);
  out[t] = s;
}
)";

static std::string exe_dir() {
  char b[4096];
  ssize_t n = readlink("/proc/self/exe", b, sizeof b - 1);
  if (n <= 0) return ".";
  std::string s(b, n);
  return s.substr(0, s.rfind('/'));
}

static std::string nvrtc_compile(bool cubin) {
  nvrtcProgram p;
  RTC(nvrtcCreateProgram(&p, rtc_src, "rtc_sum.cu", 0, nullptr, nullptr));
  const char *opt = cubin ? "--gpu-architecture=sm_90" : "--gpu-architecture=compute_90";
  nvrtcResult r = nvrtcCompileProgram(p, 1, &opt);
  if (r != NVRTC_SUCCESS) {
    size_t ls;
    nvrtcGetProgramLogSize(p, &ls);
    std::string log(ls, '\0');
    nvrtcGetProgramLog(p, &log[0]);
    fprintf(stderr, "modules: NVRTC: %s\n%s\n", nvrtcGetErrorString(r), log.c_str());
    exit(1);
  }
  size_t sz;
  std::string out;
  if (cubin) {
    RTC(nvrtcGetCUBINSize(p, &sz));
    out.resize(sz);
    RTC(nvrtcGetCUBIN(p, &out[0]));
  } else {
    RTC(nvrtcGetPTXSize(p, &sz));
    out.resize(sz);
    RTC(nvrtcGetPTX(p, &out[0]));
  }
  RTC(nvrtcDestroyProgram(&p));
  return out;
}

#ifdef LINK_DEVMALLOC
static CUmodule load_linked(const std::string &ptx) {
  CUlinkState ls;
  void *img;
  size_t sz;
  CUmodule m;
  std::string lib = exe_dir() + "/../devmalloc.ptx";
  CU(cuLinkCreate(0, nullptr, nullptr, &ls));
  CU(cuLinkAddData(ls, CU_JIT_INPUT_PTX, (void *)ptx.c_str(), ptx.size() + 1, "app.ptx", 0, nullptr,
                   nullptr));
  CU(cuLinkAddFile(ls, CU_JIT_INPUT_PTX, lib.c_str(), 0, nullptr, nullptr));
  CU(cuLinkComplete(ls, &img, &sz));
  CU(cuModuleLoadData(&m, img));
  CU(cuLinkDestroy(ls));
  return m;
}
#endif

static std::vector<unsigned long long> run(CUmodule m, const char *name, int n, int salt) {
  CUfunction f;
  CUdeviceptr out;
  CU(cuModuleGetFunction(&f, m, name));
  CU(cuMemAlloc(&out, n * sizeof(unsigned long long)));
  void *args2[] = {&n, &out}, *args3[] = {&n, &salt, &out};
  CU(cuLaunchKernel(f, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, salt < 0 ? args2 : args3, nullptr));
  CU(cuCtxSynchronize());
  std::vector<unsigned long long> h(n);
  CU(cuMemcpyDtoH(h.data(), out, n * sizeof(unsigned long long)));
  CU(cuMemFree(out));
  return h;
}

int main() {
  int n = corpus_small() ? 4096 : 65536;
  CUdevice dev;
  CUcontext ctx;
  CU(cuInit(0));
  CU(cuDeviceGet(&dev, 0));
  CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU(cuCtxSetCurrent(ctx));
  CU(cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, 64u << 20));

  std::string path = exe_dir() + "/modules_kern.ptx";
  std::ifstream in(path);
  if (!in) {
    fprintf(stderr, "modules: cannot read %s\n", path.c_str());
    return 1;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string ptx = ss.str(), rtc_ptx = nvrtc_compile(false), rtc_cubin = nvrtc_compile(true);

  CUmodule m1, m2, m3, m4;
#ifdef LINK_DEVMALLOC
  m1 = load_linked(ptx);
  m2 = load_linked(ptx);
  m3 = load_linked(rtc_ptx);
#else
  CU(cuModuleLoad(&m1, path.c_str()));
  char log[4096] = "";
  CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                         CU_JIT_OPTIMIZATION_LEVEL};
  void *vals[] = {log, (void *)(uintptr_t)sizeof log, (void *)(uintptr_t)3};
  CU(cuModuleLoadDataEx(&m2, ptx.c_str(), 3, opts, vals));
  CU(cuModuleLoadData(&m3, rtc_ptx.c_str()));
#endif
  CU(cuModuleLoadData(&m4, rtc_cubin.data()));

  std::vector<unsigned long long> r1 = run(m1, "fill_sum", n, -1), r2 = run(m2, "list_sum", n, -1),
                                  r3 = run(m3, "rtc_sum", n, 3), r4 = run(m4, "rtc_sum", n, 7);
  int bad[4] = {0, 0, 0, 0};
  for (int t = 0; t < n; t++) {
    unsigned long long s = 0;
    for (int i = 0; i < 8 + t % 50; i++) s += (unsigned)(t ^ (i * 2654435761u)) % 1000003u;
    bad[0] += r1[t] != s;
    int len = 1 + t % 9;
    s = 0;
    for (int pos = 1; pos <= len; pos++) s += (unsigned long long)(t * 10 + len - pos) * pos;
    bad[1] += r2[t] != s;
    for (int k = 0; k < 2; k++) {
      int salt = k ? 7 : 3;
      s = 0;
      for (int i = 0; i < 4 + (t + salt) % 29; i++) s += (unsigned long long)(t + 1) * (i + salt);
      bad[2 + k] += (k ? r4 : r3)[t] != s;
    }
  }
  int rc = 0;
  const char *what[4] = {"cuModuleLoad PTX", "cuModuleLoadDataEx PTX", "NVRTC PTX", "NVRTC cubin"};
  for (int k = 0; k < 4; k++)
    if (bad[k]) {
      fprintf(stderr, "modules: %s: %d wrong results\n", what[k], bad[k]);
      rc = 1;
    }
  Digest d;
  for (auto *r : {&r1, &r2, &r3, &r4}) d.bytes(r->data(), r->size() * sizeof(unsigned long long));
  for (CUmodule m : {m1, m2, m3, m4}) CU(cuModuleUnload(m));
  CU(cuDevicePrimaryCtxRelease(dev));
  fprintf(stderr, "modules: 4 modules, %d threads each\n", n);
  corpus_result("modules", d);
  return rc;
}
