# mk/device.mk — the device module's products:
#   build/libdevmalloc_device.a      relocatable device library (nvcc -rdc=true links)
#   build/libdevmalloc_device_lto.a  LTO-IR for nvcc -dlto links
#   build/devmalloc.ptx              PTX for load-time re-linking (the shim's JIT path)
#   build/devmalloc_sass.fatbin      relocatable SASS per arch for load-time re-linking
#                                    without compiling devmalloc (DEVICE_SASS_ARCHS)
#   build/nvcc-dlto                  the nvcc to use for -dlto links (see tools/cuda-dlto-toolkit.sh)

# The core files the device library compiles (core_unity.h includes them):
# every core/*.c but the host-only ones.
DEVICE_CORE_SRCS := $(filter-out core/host_prim.c core/layout.c core/check.c core/single.c,$(wildcard core/*.c))
DEVICE_SRCS := device/devmalloc.cu include/devmalloc_cuda.h $(DEVICE_CORE_SRCS) core/*.h include/devmalloc.h
# Register cap of devmalloc's device code. Callers compiled against the
# built-in malloc/free keep values in registers R32 and up across the call
# (the stock implementation never touches them); a malloc compiled with more
# registers clobbers them without saving (docs/design.md, "Calling
# convention"). The load-time re-link passes the same cap for devmalloc's PTX
# (interpose/relink/jit_link.h, DM_DEVICE_MAXRREG): keep the two equal. LTO-IR gets
# no cap: a -dlto link compiles caller and allocator as one program (and
# nvlink would otherwise cap every kernel of the program). 24, not 32: the
# registers R16-R31 that a function uses are saved and restored on each
# call, and at 24 free saves fewer of them (docs/design.md, "Calling
# convention"; its frame: $(BUILD)/device/frames.txt).
DEVICE_MAXRREG := 24
# Host symbols of the device objects (the fatbin wrappers nvcc makes, the
# descriptor writer) are hidden: a shared library linked with the device
# library must not export them, or an executable linked with it too binds its
# own registration to the library's copy of the same module (an "invalid
# resource handle" at the executable's first kernel).
# DEVICE_EXTRA_FLAGS: more nvcc flags for the device module only (an
# experiment's -D switch in a build of its own: tools/gpu-variant-build.sh).
DEVICE_EXTRA_FLAGS ?=
DEVICE_NVFLAGS := $(NVCC_FLAGS) -Icore -rdc=true -Xcompiler -fvisibility=hidden $(DEVICE_EXTRA_FLAGS)
DEVICE_ABI_FLAGS := -maxrregcount=$(DEVICE_MAXRREG)
DEVICE_PTX_ARCH ?= 80

# The library is compiled quiet: ptxas options given here are stored with its
# PTX and replayed by nvlink wherever a program's device link compiles that
# PTX (sm_100, sm_120), so -Xptxas -v would print every function's figures
# into users' builds. V=1 asks for them (here and there). The entry points'
# stack frames, which `make check` holds to their limits, come from ptxas -v
# run again on the PTX this compile kept, with the flags nvcc gave ptxas.
DEVICE_VERBOSE := $(if $(filter 1,$(V)),-Xptxas -v)
DEVICE_KEEP := $(BUILD)/device/keep
PTXAS ?= $(CUDA_HOME)/bin/ptxas
$(BUILD)/device/devmalloc.o: $(DEVICE_SRCS) mk/device.mk | $(BUILD)/device/.dir
	rm -rf $(DEVICE_KEEP) && mkdir -p $(DEVICE_KEEP)
	$(NVCC) $(DEVICE_NVFLAGS) $(DEVICE_ABI_FLAGS) $(NVCC_GENCODE) $(DEVICE_VERBOSE) -dc device/devmalloc.cu \
	  --keep --keep-dir $(DEVICE_KEEP) -o $@
	find $(DEVICE_KEEP) -type f ! -name 'devmalloc.compute_*.ptx' -delete
$(BUILD)/device/frames.txt: $(BUILD)/device/devmalloc.o
	for a in $(GPU_ARCHS); do $(PTXAS) -arch=sm_$$a -m64 --compile-only $(DEVICE_ABI_FLAGS) -v \
	  $(DEVICE_KEEP)/devmalloc.compute_$$a.ptx -o /dev/null || exit 1; done 2>$(BUILD)/device/ptxas.txt
	grep -A1 -E 'properties for (malloc|free|__nv_aligned_device_malloc_impl)$$' $(BUILD)/device/ptxas.txt \
	  | grep -v -- '^--' | paste - - | sed 's/ptxas info *: Function properties for /device entry /' >$@
	$(if $(filter 1,$(V)),cat $@)
$(BUILD)/device/devmalloc_lto.o: $(DEVICE_SRCS) mk/device.mk | $(BUILD)/device/.dir
	$(NVCC) $(DEVICE_NVFLAGS) $(LTO_GENCODE) -dc device/devmalloc.cu -o $@

# devmalloc_cuda_init(): host code only, so it is no part of the device link.
$(BUILD)/device/cuda_init.o: host/heap/cuda_init.cpp include/*.h | $(BUILD)/device/.dir
	$(CXX) -O2 -fPIC -Iinclude -I$(CUDA_HOME)/include -c $< -o $@

# Architectures the toolkit targets below devmalloc's minimum (sm_80) get
# device/arch_guard.cu instead: an -rdc link for them fails naming the reason
# rather than leaving the kernels on the stock allocator silently. (Not in
# the LTO library: nvlink would take LTO-IR of sm_75 for newer targets too.)
GUARD_ARCHS ?= $(shell $(NVCC) --list-gpu-arch 2>/dev/null | sed -n 's/^compute_\([0-9]*\)$$/\1/p' | awk '$$1 < 80')
GUARD_OBJ     := $(if $(GUARD_ARCHS),$(BUILD)/device/arch_guard.o)
$(BUILD)/device/arch_guard.o: device/arch_guard.cu mk/device.mk | $(BUILD)/device/.dir
	$(NVCC) $(DEVICE_NVFLAGS) $(foreach a,$(GUARD_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) -dc $< -o $@

$(DEVICE_LIB): $(BUILD)/device/devmalloc.o $(BUILD)/device/cuda_init.o $(GUARD_OBJ)
	rm -f $@; $(NVCC) -lib $^ -o $@
$(DEVICE_LTO_LIB): $(BUILD)/device/devmalloc_lto.o $(BUILD)/device/cuda_init.o
	rm -f $@; $(NVCC) -lib $^ -o $@
# The PTX is generated under the same register cap as the library: the cap
# shapes the compiler's own code (cicc -maxreg), not only ptxas's. PTX made
# without it and compiled at the cap by the re-link gave malloc a 72-byte
# frame with 96 bytes of spills on sm_90, where the library's malloc has 56
# and 56 (check_device_frames compares the two).
$(DEVICE_PTX): $(DEVICE_SRCS) mk/device.mk | $(BUILD)/.dir
	$(NVCC) $(DEVICE_NVFLAGS) $(DEVICE_ABI_FLAGS) -arch=compute_$(DEVICE_PTX_ARCH) -ptx device/devmalloc.cu -o $@

# The same code as relocatable SASS, one cubin per architecture, under the
# same register cap: the shim links it instead of the PTX when the device is
# one of these, so that a re-link compiles nothing of devmalloc's.
DEVICE_SASS_ARCHS ?= 80 86 89 90 100 120
$(DEVICE_SASS): $(DEVICE_SRCS) mk/device.mk | $(BUILD)/.dir
	$(NVCC) $(DEVICE_NVFLAGS) $(DEVICE_ABI_FLAGS) \
	  $(foreach a,$(DEVICE_SASS_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
	  -fatbin device/devmalloc.cu -o $@

$(BUILD)/nvcc-dlto: tools/cuda-dlto-toolkit.sh | $(BUILD)/.dir
	printf '#!/bin/sh\nexec "%s" "$$@"\n' "$$(bash tools/cuda-dlto-toolkit.sh $(abspath $(BUILD))/cuda-dlto $(CUDA_HOME))" >$@
	chmod +x $@

LIBS += $(DEVICE_LIB) $(DEVICE_LTO_LIB) $(DEVICE_PTX) $(DEVICE_SASS) $(BUILD)/nvcc-dlto

DEVICE_FRAME_CHECK := $(BUILD)/tests/check_device_frames
$(DEVICE_FRAME_CHECK): tests/unit/check_device_frames.sh $(BUILD)/device/frames.txt $(DEVICE_PTX) | $(BUILD)/tests/.dir
	printf '#!/bin/sh\nexec bash %s %s mk/device.mk interpose/relink/jit_link.h %s "%s"\n' $< $(BUILD)/device/frames.txt \
	  $(DEVICE_PTX) '$(GPU_ARCHS)' >$@ && chmod +x $@
CHECK_BINS += $(DEVICE_FRAME_CHECK)

$(BUILD)/tests/check_device_lib_hidden: tests/unit/check_device_lib_hidden.sh $(DEVICE_LIB) $(DEVICE_LTO_LIB) | $(BUILD)/tests/.dir
	printf '#!/bin/sh\nexec bash %s %s %s\n' $< $(DEVICE_LIB) $(DEVICE_LTO_LIB) >$@ && chmod +x $@
CHECK_BINS += $(BUILD)/tests/check_device_lib_hidden
