# mk/device_gpu.mk — the device module's GPU test programs (built here, run on
# a GPU machine by tests/gpu/cases/1*_device_*.sh).

GPU_PROG_DIR := $(BUILD)/gpu
DM_RELINK_LIBS := $(DEVICE_LIB) $(HOST_LIB) -lcuda

$(GPU_PROG_DIR)/dm_suite: tests/gpu/progs/dm_suite.cu tests/gpu/progs/pass_fail.h $(DEVICE_LIB) $(HOST_LIB) | $(GPU_PROG_DIR)/.dir
	$(NVCC) -O2 -std=c++17 -Iinclude $(NVCC_GENCODE) -rdc=true $< $(DM_RELINK_LIBS) -o $@
$(GPU_PROG_DIR)/dm_unbound: tests/gpu/progs/dm_unbound.cu $(DEVICE_LIB) | $(GPU_PROG_DIR)/.dir
	$(NVCC) -O2 $(NVCC_GENCODE) -rdc=true $< $(DEVICE_LIB) -o $@
$(GPU_PROG_DIR)/dm_lto: tests/gpu/progs/dm_lto.cu $(DEVICE_LTO_LIB) $(HOST_LIB) $(BUILD)/nvcc-dlto | $(GPU_PROG_DIR)/.dir
	$(BUILD)/nvcc-dlto -O2 -std=c++17 -Iinclude -arch=sm_90 -dlto -rdc=true $< $(DEVICE_LTO_LIB) $(HOST_LIB) -lcuda -o $@

GPU_BINS += $(GPU_PROG_DIR)/dm_suite $(GPU_PROG_DIR)/dm_unbound $(GPU_PROG_DIR)/dm_lto

# Check mode's GPU case (tests/gpu/cases/55_check.sh): a plain nvcc program
# (PTX embedded, re-linked under the shim) with an off-by-one write.
$(GPU_PROG_DIR)/check_overflow: tests/gpu/progs/check_overflow.cu | $(GPU_PROG_DIR)/.dir
	$(NVCC) -O2 -gencode arch=compute_90,code=[sm_90,compute_90] $< -o $@
GPU_BINS += $(GPU_PROG_DIR)/check_overflow

# GPU suite (tests/gpu/cases/14_device_grow.sh): the same program relinked
# (heap from devmalloc_cuda_init_growing) and plain (PTX embedded: re-linked
# under the shim at load time).
$(BUILD)/gpu/dm_grow: tests/gpu/progs/dm_grow.cu tests/gpu/progs/pass_fail.h $(DEVICE_LIB) $(HOST_LIB) | $(BUILD)/gpu/.dir
	$(NVCC) -O2 -std=c++17 -Iinclude $(NVCC_GENCODE) -rdc=true $< $(DEVICE_LIB) $(HOST_LIB) -lcuda -lpthread -o $@
$(BUILD)/gpu/dm_grow_plain: tests/gpu/progs/dm_grow.cu tests/gpu/progs/pass_fail.h | $(BUILD)/gpu/.dir
	$(NVCC) -O2 -std=c++17 -DPLAIN -gencode arch=compute_90,code=[sm_90,compute_90] $< -o $@
GPU_BINS += $(BUILD)/gpu/dm_grow $(BUILD)/gpu/dm_grow_plain

# GPU suite (tests/gpu/cases/15_device_reuse.sh): blocks freed right after
# their owner's last stores, relinked and plain (under the shim, and stock).
$(BUILD)/gpu/dm_reuse: tests/gpu/progs/dm_reuse.cu tests/gpu/progs/pass_fail.h $(DEVICE_LIB) $(HOST_LIB) | $(BUILD)/gpu/.dir
	$(NVCC) -O2 -std=c++17 -Iinclude $(NVCC_GENCODE) -rdc=true $< $(DM_RELINK_LIBS) -o $@
$(BUILD)/gpu/dm_reuse_plain: tests/gpu/progs/dm_reuse.cu tests/gpu/progs/pass_fail.h | $(BUILD)/gpu/.dir
	$(NVCC) -O2 -std=c++17 -DPLAIN -gencode arch=compute_90,code=[sm_90,compute_90] $< -o $@
GPU_BINS += $(BUILD)/gpu/dm_reuse $(BUILD)/gpu/dm_reuse_plain

# The device suite with a watchdog that prints the heap's state when it hangs
# (a tool, not a suite case: tests/gpu/progs/dm_hangdump.cu).
$(GPU_PROG_DIR)/heap_dump.o: tests/gpu/progs/heap_dump.c tests/gpu/progs/heap_dump.h core/*.h | $(GPU_PROG_DIR)/.dir
	$(CC) $(HOST_CFLAGS) $(CPPFLAGS) -Icore -c $< -o $@
$(GPU_PROG_DIR)/dm_hangdump: tests/gpu/progs/dm_hangdump.cu tests/gpu/progs/dm_suite.cu tests/gpu/progs/pass_fail.h $(GPU_PROG_DIR)/heap_dump.o $(DEVICE_LIB) $(HOST_LIB) | $(GPU_PROG_DIR)/.dir
	$(NVCC) -O2 -std=c++17 -Iinclude -Icore -Ihost/heap -Itests/gpu/progs $(NVCC_GENCODE) -rdc=true $< $(GPU_PROG_DIR)/heap_dump.o $(DM_RELINK_LIBS) -o $@
GPU_BINS += $(GPU_PROG_DIR)/dm_hangdump

# GPU suite (tests/gpu/cases/16_device_first.sh): a fresh heap's first
# kernels, relinked and plain (under the shim, and stock).
$(BUILD)/gpu/dm_first: tests/gpu/progs/dm_first.cu tests/gpu/progs/pass_fail.h $(DEVICE_LIB) $(HOST_LIB) | $(BUILD)/gpu/.dir
	$(NVCC) -O2 -std=c++17 -Iinclude $(NVCC_GENCODE) -rdc=true $< $(DM_RELINK_LIBS) -o $@
$(BUILD)/gpu/dm_first_plain: tests/gpu/progs/dm_first.cu tests/gpu/progs/pass_fail.h | $(BUILD)/gpu/.dir
	$(NVCC) -O2 -std=c++17 -DPLAIN -gencode arch=compute_90,code=[sm_90,compute_90] $< -o $@
GPU_BINS += $(BUILD)/gpu/dm_first $(BUILD)/gpu/dm_first_plain

# The soak (tests/gpu/soak.sh, `make soak`; a short run in the GPU suite,
# tests/gpu/cases/17_device_soak.sh): relinked and plain (under the shim).
$(BUILD)/gpu/dm_soak: tests/gpu/progs/dm_soak.cu tests/gpu/progs/pass_fail.h $(DEVICE_LIB) $(HOST_LIB) | $(BUILD)/gpu/.dir
	$(NVCC) -O2 -std=c++17 -Iinclude $(NVCC_GENCODE) -rdc=true $< $(DM_RELINK_LIBS) -o $@
$(BUILD)/gpu/dm_soak_plain: tests/gpu/progs/dm_soak.cu tests/gpu/progs/pass_fail.h | $(BUILD)/gpu/.dir
	$(NVCC) -O2 -std=c++17 -DPLAIN -gencode arch=compute_90,code=[sm_90,compute_90] $< -o $@
GPU_BINS += $(BUILD)/gpu/dm_soak $(BUILD)/gpu/dm_soak_plain
