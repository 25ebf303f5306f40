# mk/interpose.mk — the LD_PRELOAD shim build/libdevmalloc_preload.so,
# its host tests and the GPU test programs of tests/gpu/cases/50_shim_*.sh.
#
# The shim links, all static and hidden (-Wl,--exclude-libs,ALL + a version
# script exporting only cu* hooks and dlsym):
#   - its own objects (build/interpose/),
#   - the host runtime $(HOST_LIB), the re-link $(RELINK_LIB) and the host pool
#     $(POOL_LIB) when those parts exist, each copied with its undefined cu*
#     symbols renamed to dm_fwd_* (trampolines to the real driver, generated
#     by interpose/gen_forwarders.sh): the shim never links libcuda,
#   - zstd, lz4 statically; libelf is dlopened on first use (elf_lazy.c), so
#     a process that never touches CUDA maps nothing but the shim and libc.
# It links with -z defs: nothing may stay unresolved.

SHIM          := $(BUILD)/libdevmalloc_preload.so
SHIM_DIR      := $(BUILD)/interpose
# The shim's own sources, by folder (the re-link and the pool come as parts).
SHIM_SRCS     := $(addprefix interpose/driver/,array.c bind.c ctxtab.c dlsym.c driver.c \
                   fallbacks.c glue.c graphs.c heap_ops.c hook_ctx.c hook_graph.c hook_launch.c \
                   hook_load.c hook_mem.c hook_procaddr.c hook_sync.c hooks.c fork.c limit.c \
                   owners.c state.c) \
                 $(addprefix interpose/image/,elf_lazy.c image_bound.c image_scan.c) \
                 $(addprefix interpose/observe/,nvtx.c stats_rec.c trace.c trace_timer.c) \
                 $(addprefix interpose/options/,log.c options.c options_obs.c)
SHIM_OBJS     := $(patsubst %.c,$(SHIM_DIR)/%.o,$(notdir $(SHIM_SRCS))) $(SHIM_DIR)/dlsym_entry.o
SHIM_HDRS     := $(wildcard $(SHIM_FOLDERS:%=%/*.h) $(SHIM_FOLDERS:%=%/*.def)) include/devmalloc.h
SHIM_CFLAGS   := $(HOST_CFLAGS) $(CPPFLAGS) $(SHIM_INC) -fvisibility=hidden
# Parts linked in (optional: a part that is not in the tree is left out and
# the weak fallbacks of interpose/fallbacks.c stand in).
# (tested by mk file: those .mk files are read after this one)
SHIM_PARTS    := $(HOST_LIB) $(if $(wildcard mk/relink.mk),$(BUILD)/libdevmalloc_relink.a) \
                 $(if $(wildcard mk/pool.mk),$(BUILD)/libdevmalloc_pool.a)
SHIM_FWD_LIBS := $(patsubst $(BUILD)/%.a,$(SHIM_DIR)/fwd/%.a,$(SHIM_PARTS))
# libelf.a uses initial-exec TLS (not linkable into a .so): libelf.so.1 is
# loaded at run time by elf_lazy.c (the GPU machines have it, DESIGN.md).
SHIM_STATIC   := -l:libzstd.a -l:liblz4.a
# -z nodelete: a dlclose() cannot unmap hooks the application still holds.
SHIM_LDFLAGS  := -shared -Wl,-z,defs -Wl,-z,nodelete -Wl,--exclude-libs,ALL \
                 -Wl,--version-script=interpose/driver/exports.map -Wl,-soname,libdevmalloc_preload.so

define SHIM_RULE
$$(SHIM_DIR)/%.o: $(1)/%.c $$(SHIM_HDRS) | $$(SHIM_DIR)/.dir
	$$(CC) $$(SHIM_CFLAGS) -c $$< -o $$@
endef
$(foreach d,interpose/driver interpose/image interpose/observe interpose/options,$(eval $(call SHIM_RULE,$(d))))
$(SHIM_DIR)/dlsym_entry.o: interpose/driver/dlsym_entry.S | $(SHIM_DIR)/.dir
	$(CC) -fPIC -c $< -o $@

# Undefined cu* symbols of the parts -> forwarders.
$(SHIM_DIR)/fwd.syms: $(SHIM_PARTS) | $(SHIM_DIR)/.dir
	nm -u $(SHIM_PARTS) | awk '$$1=="U" && $$2 ~ /^cu[A-Z]/ {print $$2}' | sort -u > $@
$(SHIM_DIR)/fwd.map: $(SHIM_DIR)/fwd.syms
	awk '{print $$1" dm_fwd_"$$1}' $< > $@
$(SHIM_DIR)/forwarders.c: $(SHIM_DIR)/fwd.syms interpose/driver/gen_forwarders.sh
	bash interpose/driver/gen_forwarders.sh $< > $@
$(SHIM_DIR)/forwarders.o: $(SHIM_DIR)/forwarders.c
	$(CC) $(SHIM_CFLAGS) -c $< -o $@
$(SHIM_DIR)/fwd/%.a: $(BUILD)/%.a $(SHIM_DIR)/fwd.map | $(SHIM_DIR)/fwd/.dir
	cp $< $@ && objcopy --redefine-syms=$(SHIM_DIR)/fwd.map $@

$(SHIM): $(SHIM_OBJS) $(SHIM_DIR)/forwarders.o $(SHIM_FWD_LIBS) interpose/driver/exports.map
	$(CC) $(SHIM_LDFLAGS) -o $@ $(SHIM_OBJS) $(SHIM_DIR)/forwarders.o \
	  -Wl,--whole-archive $(filter-out $(SHIM_DIR)/fwd/libdevmalloc.a,$(SHIM_FWD_LIBS)) \
	  -Wl,--no-whole-archive $(SHIM_DIR)/fwd/libdevmalloc.a $(SHIM_STATIC) -ldl -lpthread -lm

# The CLI: tools/devmalloc with its version and the option list generated
# from options.def (tools/options_help.c) filled in.
$(BUILD)/options_help: tools/options_help.c interpose/options/options.def interpose/options/opt_parse.h | $(BUILD)/.dir
	$(CC) $(HOST_CFLAGS) -Iinterpose/options $< -o $@ -lm
$(BUILD)/devmalloc: tools/devmalloc $(BUILD)/options_help include/devmalloc.h
	awk -v h=$(BUILD)/options_help '$$0=="@OPTIONS_HELP@" {system(h); next} {print}' $< | \
	  sed 's/"@VERSION@"/"$(DM_VERSION)"/' > $@ && chmod +x $@

LIBS += $(SHIM)
TOOLS += $(BUILD)/devmalloc

INSTALL_STEPS += install -m 755 $(SHIM) $(DESTDIR)$(PREFIX)/lib/ ; \
                 install -m 755 $(BUILD)/devmalloc $(DESTDIR)$(PREFIX)/bin/ ;

# ---- host tests (cmocka, no GPU) ----
SHIM_TDIR := $(SHIM_DIR)/tests
# Everything but heap_ops.o (tests bring a fake host runtime).
SHIM_TEST_LIB := $(SHIM_TDIR)/libshim_test.a
$(SHIM_TEST_LIB): $(filter-out $(SHIM_DIR)/heap_ops.o,$(SHIM_OBJS)) | $(SHIM_TDIR)/.dir
	rm -f $@ && ar rcs $@ $^
SHIM_TEST_CFLAGS := $(SHIM_CFLAGS) -fvisibility=default \
                    -DCUDA_STUB_LIB='"$(CUDA_STUBS)/libcuda.so"' -DSHIM_SO='"$(abspath $(SHIM))"'
SHIM_TESTS := options hooks shim_core observe log lifecycle stock_notice
SHIM_TEST_BINS := $(SHIM_TESTS:%=$(SHIM_TDIR)/test_%)
$(SHIM_TDIR)/test_%: tests/unit/test_%.c tests/unit/shim_fake.h tests/unit/stats_canon.py $(SHIM_TEST_LIB) $(SHIM_HDRS)
	$(CC) $(SHIM_TEST_CFLAGS) $< -o $@ $(SHIM_TEST_LIB) -lcmocka -ldl -lpthread -lm

# The shim's logic tests again under ASan/UBSan and under TSan: the shim's
# objects (but heap_ops) compiled with the sanitizer, in one build per tool.
# dlsym.c's interposer is renamed there: the sanitizer runtime resolves its
# interceptors with dlsym while it starts, before the shim could answer
# (test_hooks covers the interposer).
SHIM_TEST_SRCS := $(filter-out interpose/driver/heap_ops.c interpose/driver/dlsym.c,$(SHIM_SRCS))
SHIM_SAN_asan := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SHIM_SAN_tsan := -fsanitize=thread
$(SHIM_TDIR)/test_shim_core_%: tests/unit/test_shim_core.c tests/unit/shim_fake.h $(SHIM_TEST_SRCS) interpose/driver/dlsym.c $(SHIM_HDRS) | $(SHIM_TDIR)/.dir
	$(CC) $(SHIM_TEST_CFLAGS) -O1 -Ddlsym=dm_test_dlsym -c interpose/driver/dlsym.c -o $@-dlsym.o
	$(CC) $(SHIM_TEST_CFLAGS) -O1 $(SHIM_SAN_$*) $< $(SHIM_TEST_SRCS) $@-dlsym.o -o $@ \
	  -lcmocka -ldl -lpthread -lm
SHIM_TEST_BINS += $(SHIM_TDIR)/test_shim_core_asan $(SHIM_TDIR)/test_shim_core_tsan

# The pre-scan alone, from source, under ASan and UBSan (hostile unsized images).
IMAGE_SCAN_SRCS := interpose/image/image_bound.c interpose/image/image_scan.c
$(SHIM_TDIR)/test_image_bound: tests/unit/test_image_bound.c $(IMAGE_SCAN_SRCS) $(SHIM_HDRS) | $(SHIM_TDIR)/.dir
	$(CC) $(SHIM_TEST_CFLAGS) -O1 $(SAN_FLAGS) $< $(IMAGE_SCAN_SRCS) -o $@ -lcmocka
SHIM_TEST_BINS += $(SHIM_TDIR)/test_image_bound
# The lifecycle test dlopens the shim itself.
$(SHIM_TDIR)/test_lifecycle: $(SHIM)

CHECK_BINS += $(SHIM_TEST_BINS)
# The summary at exit in the other two formats, NVTX off once (test_observe
# reads DEVMALLOC_STATS and DEVMALLOC_NVTX when set).
$(SHIM_TDIR)/check_observe_formats: $(SHIM_TDIR)/test_observe
	printf '#!/bin/sh\nset -e\nDEVMALLOC_STATS=csv DEVMALLOC_NVTX=0 %s\nDEVMALLOC_STATS=1 %s\n' $< $< > $@ && chmod +x $@
CHECK_BINS += $(SHIM_TDIR)/check_observe_formats

# ---- GPU test programs (built here, run by tests/gpu/cases/50_shim_*.sh) ----
SHIM_GPU := $(BUILD)/gpu/shim
SHIM_NV  := $(NVCC) -O2 -std=c++17 -arch=sm_90 -rdc=true
$(SHIM_GPU)/shim_static: tests/gpu/progs/shim_alloc.cu tests/gpu/progs/shim_common.h tests/gpu/progs/shim_kernel.cuh $(DEVICE_LIB) | $(SHIM_GPU)/.dir
	$(SHIM_NV) $< $(DEVICE_LIB) -o $@
$(SHIM_GPU)/shim_shared: tests/gpu/progs/shim_alloc.cu tests/gpu/progs/shim_common.h tests/gpu/progs/shim_kernel.cuh $(DEVICE_LIB) | $(SHIM_GPU)/.dir
	$(SHIM_NV) -cudart shared $< $(DEVICE_LIB) -o $@
$(SHIM_GPU)/shim_graph: tests/gpu/progs/shim_graph.cu tests/gpu/progs/shim_common.h tests/gpu/progs/shim_kernel.cuh $(DEVICE_LIB) | $(SHIM_GPU)/.dir
	$(SHIM_NV) $< $(DEVICE_LIB) -o $@
$(SHIM_GPU)/shim_threads: tests/gpu/progs/shim_threads.cu tests/gpu/progs/shim_common.h tests/gpu/progs/shim_kernel.cuh $(DEVICE_LIB) | $(SHIM_GPU)/.dir
	$(SHIM_NV) $< $(DEVICE_LIB) -o $@ -lpthread
$(SHIM_GPU)/shim_multigpu: tests/gpu/progs/shim_multigpu.cu tests/gpu/progs/shim_common.h tests/gpu/progs/shim_kernel.cuh $(DEVICE_LIB) | $(SHIM_GPU)/.dir
	$(SHIM_NV) $< $(DEVICE_LIB) -o $@
$(SHIM_GPU)/shim_limit: tests/gpu/progs/shim_limit.cu tests/gpu/progs/shim_common.h tests/gpu/progs/shim_kernel.cuh $(DEVICE_LIB) | $(SHIM_GPU)/.dir
	$(SHIM_NV) $< $(DEVICE_LIB) -o $@
# Driver API: the kernels device-linked with devmalloc into one cubin, loaded
# by a host program linked with -lcuda.
$(SHIM_GPU)/shim_kernels.o: tests/gpu/progs/shim_driver_kernels.cu tests/gpu/progs/shim_kernel.cuh | $(SHIM_GPU)/.dir
	$(NVCC) -O2 -arch=sm_90 -rdc=true -c $< -o $@
$(SHIM_GPU)/shim_kernels.cubin: $(SHIM_GPU)/shim_kernels.o $(DEVICE_LIB)
	$(NVCC) -arch=sm_90 -dlink -cubin $^ -o $@
$(SHIM_GPU)/shim_driver: tests/gpu/progs/shim_driver.c | $(SHIM_GPU)/.dir
	$(CC) $(HOST_CFLAGS) $(CPPFLAGS) $< -o $@ $(LDCUDA)

SHIM_GPU_BINS := $(addprefix $(SHIM_GPU)/,shim_static shim_shared shim_graph shim_threads \
                   shim_multigpu shim_limit shim_kernels.cubin shim_driver)
GPU_BINS += $(SHIM) $(SHIM_GPU_BINS)

# ---- the shim beside other interposers (host, no GPU) ----
ITP_DIR := $(SHIM_DIR)/interposers
$(ITP_DIR)/lazy_malloc.so: tests/interposers/lazy_malloc.c | $(ITP_DIR)/.dir
	$(CC) $(HOST_CFLAGS) -shared $< -o $@ -ldl
$(ITP_DIR)/probe: tests/interposers/probe.c | $(ITP_DIR)/.dir
	$(CC) $(HOST_CFLAGS) $< -o $@ -ldl
$(ITP_DIR)/check_interposers: tests/interposers/check_interposers.sh $(SHIM) \
    $(ITP_DIR)/lazy_malloc.so $(ITP_DIR)/probe | $(ITP_DIR)/.dir
	printf '#!/bin/sh\nexec bash %s %s %s %s %s\n' $(abspath $<) $(abspath $(SHIM)) \
	  $(abspath $(ITP_DIR)/lazy_malloc.so) $(abspath $(ITP_DIR)/probe) $(CUDA_STUBS)/libcuda.so > $@
	chmod +x $@
CHECK_BINS += $(ITP_DIR)/check_interposers
GPU_BINS += $(ITP_DIR)/lazy_malloc.so    # tests/gpu/cases/52_shim_coexist.sh

# ---- the CLI and the GPU scripts on a machine without a GPU ----
$(BUILD)/tests/check_cli: tests/unit/check_cli.sh $(BUILD)/devmalloc $(BUILD)/devmalloc-inspect \
    $(BUILD)/bench/ab_stock bench/run.sh bench/plot_pool.py tests/gpu/run.sh tools/need-gpu.sh \
    | $(BUILD)/tests/.dir
	printf '#!/bin/sh\nexec bash %s %s\n' $< $(BUILD) > $@ && chmod +x $@
CHECK_BINS += $(BUILD)/tests/check_cli
