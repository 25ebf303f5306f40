# mk/config.mk — toolchain, flags and the dependency check shared by all parts.

CUDA_HOME ?= $(shell d=$$(dirname $$(dirname $$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc))); echo $$d)
NVCC      ?= $(CUDA_HOME)/bin/nvcc
CC        ?= gcc
# Architectures the device products are built for (SASS) plus PTX of the last.
GPU_ARCHS ?= 80 90
GPU_PTX_ARCH ?= 90

CFLAGS   ?= -O2 -g
WARN     := -Wall -Wextra -Wno-unused-parameter
CPPFLAGS += -Iinclude -I$(CUDA_HOME)/include
HOST_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -fPIC
NVCC_FLAGS  := -O3 -std=c++17 -Iinclude -Xcompiler -fPIC
NVCC_GENCODE := $(foreach a,$(GPU_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
                -gencode arch=compute_$(GPU_PTX_ARCH),code=compute_$(GPU_PTX_ARCH)
CUDA_LIBDIR := $(CUDA_HOME)/lib64
# libcuda stubs let host programs link on machines without a driver.
CUDA_STUBS  := $(CUDA_LIBDIR)/stubs
LDCUDA      := -L$(CUDA_LIBDIR) -L$(CUDA_STUBS) -lcuda

# Missing dependencies are installed by tools/setup-deps.sh (Debian; the
# Makefile's deps target says for which goals: --for build|check|gpu).
DEPS_CHECK = bash tools/setup-deps.sh --if-missing --mpi-root $(BUILD)/mpi-root

# Every rule makes its folder through these; with jobs in parallel they wait
# for the dependency check of the goals that run it (the top Makefile's deps).
DEPS_FIRST := $(if $(filter all check gpu-build gpu-check bench install,$(or $(MAKECMDGOALS),all)),deps)
$(BUILD)/%/.dir: | $(DEPS_FIRST)
	@mkdir -p $(dir $@) && touch $@
$(BUILD)/.dir: | $(DEPS_FIRST)
	@mkdir -p $(dir $@) && touch $@
.PRECIOUS: $(BUILD)/%/.dir

# Product names every part may refer to (defined here so include order does not matter).
HOST_LIB       := $(BUILD)/libdevmalloc.a
OPTIONS_LIB    := $(BUILD)/interpose/libdmoptions.a
RELINK_LIB     := $(BUILD)/libdevmalloc_relink.a
POOL_LIB       := $(BUILD)/libdevmalloc_pool.a
HOST_SO        := $(BUILD)/libdevmalloc.so
DEVICE_LIB     := $(BUILD)/libdevmalloc_device.a
DEVICE_LTO_LIB := $(BUILD)/libdevmalloc_device_lto.a
DEVICE_PTX     := $(BUILD)/devmalloc.ptx
DEVICE_SASS    := $(BUILD)/devmalloc_sass.fatbin
NVCC_DLTO      := $(BUILD)/nvcc-dlto
# The shim's and the host pool's folders: sources include across folders by
# "folder/name.h" from these roots; tests name headers bare.
SHIM_FOLDERS   := interpose/driver interpose/image interpose/relink interpose/observe \
                  host/options host/pool
SHIM_INC       := -Iinterpose -Ihost $(addprefix -I,$(SHIM_FOLDERS))
LTO_GENCODE    := $(foreach a,$(GPU_ARCHS),-gencode arch=compute_$(a),code=lto_$(a))
