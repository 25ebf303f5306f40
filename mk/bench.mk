# mk/bench.mk — the A/B benchmark: one source (and the .cuh files it includes), two binaries.
#   build/bench/ab_stock      CUDA's stock device malloc
#   build/bench/ab_devmalloc  the same source relinked with devmalloc
# (and build/bench/ab_devmalloc_lto, linked with -dlto, for comparing builds only)

$(BUILD)/bench/ab_stock: bench/ab_bench.cu bench/ab_*.cuh | $(BUILD)/bench/.dir
	$(NVCC) -O3 -std=c++17 $(NVCC_GENCODE) $< -o $@
# The devmalloc side's compile flags, relinked or linked with -dlto (below).
BENCH_DM_FLAGS := -O3 -std=c++17 -Iinclude -DDM_BENCH_DEVMALLOC -rdc=true
$(BUILD)/bench/ab_devmalloc: bench/ab_bench.cu bench/ab_*.cuh $(DEVICE_LIB) $(HOST_LIB) | $(BUILD)/bench/.dir
	$(NVCC) $(BENCH_DM_FLAGS) $(NVCC_GENCODE) $< \
	  $(DEVICE_LIB) $(HOST_LIB) -lcuda -o $@

GPU_BINS += $(BUILD)/bench/ab_stock $(BUILD)/bench/ab_devmalloc

# The same source linked with -dlto against devmalloc's LTO-IR (malloc and
# free inlined into the kernels), for one architecture; BENCH_LTO_MAXRREG
# caps every kernel's registers (empty: no cap, as a user's -dlto link).
# Not part of make bench: tools/gpu-variant-build.sh builds it
# (VARIANT_LTO=1) to compare the ways on a GPU.
BENCH_LTO_ARCH ?= 90
BENCH_LTO_MAXRREG ?=
$(BUILD)/bench/ab_devmalloc_lto: bench/ab_bench.cu bench/ab_*.cuh $(DEVICE_LTO_LIB) $(HOST_LIB) $(BUILD)/nvcc-dlto | $(BUILD)/bench/.dir
	$(BUILD)/nvcc-dlto $(BENCH_DM_FLAGS) -arch=sm_$(BENCH_LTO_ARCH) -dlto \
	  $(if $(BENCH_LTO_MAXRREG),-maxrregcount=$(BENCH_LTO_MAXRREG)) $< $(DEVICE_LTO_LIB) $(HOST_LIB) -lcuda -o $@

# bench/report.py against a made-up run (reference comparison, met/missed).
BENCH_REPORT_CHECK := $(BUILD)/tests/check_bench_report
$(BENCH_REPORT_CHECK): tests/unit/check_bench_report.sh bench/report.py bench/reference_h200.csv | $(BUILD)/tests/.dir
	printf '#!/bin/sh\nexec bash %s\n' $< >$@ && chmod +x $@
CHECK_BINS += $(BENCH_REPORT_CHECK)
