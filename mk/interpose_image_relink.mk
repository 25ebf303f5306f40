# mk/interpose_image_relink.mk — load-time re-link of unmodified binaries:
# the image readers (interpose/image/: fatbin, cubin, PTX, decompression),
# the JIT link and its cache (interpose/relink/), the devmalloc-inspect tool,
# host tests, the fuzz targets and the GPU case programs.
#
# Products
#   $(BUILD)/libdevmalloc_relink.a   static PIC archive the shim links, with
#                                    $(RELINK_LDLIBS) after it
#   $(BUILD)/devmalloc-inspect       the inspect tool (TOOLS)
# Targets
#   make fuzz [FUZZ_TIME=20]          run every libFuzzer target FUZZ_TIME seconds

# The reader alone (no driver, no embedded PTX): tests, fuzz and inspect use it.
RELINK_READER_SRCS := interpose/image/fatbin.c interpose/image/decompress.c \
                      interpose/image/cubin_elf.c interpose/image/ptx_scan.c \
                      interpose/image/relfatbin.c interpose/image/elf_origin.c \
                      interpose/relink/sha256.c interpose/relink/crc32c.c interpose/relink/cache.c \
                      interpose/relink/cache_dir.c
RELINK_SRCS := $(RELINK_READER_SRCS) interpose/relink/jit_link.c interpose/relink/relink.c \
               interpose/relink/ahead.c interpose/relink/relink_rdc.c interpose/relink/devmalloc_code.c \
               interpose/relink/ptx_inline.c
RELINK_HDRS := $(wildcard $(SHIM_FOLDERS:%=%/*.h)) include/devmalloc.h
RELINK_DIR  := $(BUILD)/relink
# Link the archive with these. zstd and lz4 are static and must stay hidden
# in the shim (-Wl,--exclude-libs,ALL): see docs/jit.md.
RELINK_LDLIBS := -l:libzstd.a -l:liblz4.a -lelf -lpthread -ldl
# The device runtime library a re-link of a dynamic-parallelism program may
# need (interpose/relink/relink_rdc.c; DEVMALLOC_CUDADEVRT overrides it).
RELINK_CFLAGS := $(HOST_CFLAGS) $(CPPFLAGS) $(SHIM_INC) -fvisibility=hidden \
                 -DDM_CUDADEVRT_DEFAULT='"$(CUDA_LIBDIR)/libcudadevrt.a"'

# devmalloc's PTX and relocatable SASS embedded in the shim (mk/device.mk
# builds them).
DM_PTX := $(DEVICE_PTX)
DM_SASS := $(DEVICE_SASS)
DM_CODE_OBJS := $(RELINK_DIR)/devmalloc_ptx.o $(RELINK_DIR)/devmalloc_sass.o

RELINK_OBJS := $(patsubst %.c,$(RELINK_DIR)/%.o,$(notdir $(RELINK_SRCS))) $(DM_CODE_OBJS)
RELINK_READER_OBJS := $(patsubst %.c,$(RELINK_DIR)/%.o,$(notdir $(RELINK_READER_SRCS)))
# The sanitized reader is for tests only: built with their hooks (-DDM_TESTING).
RELINK_ASAN_OBJS := $(patsubst %.c,$(RELINK_DIR)/asan/%.o,$(notdir $(RELINK_READER_SRCS)))
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

define RELINK_RULES
$$(RELINK_DIR)/%.o: $(1)/%.c $$(RELINK_HDRS) | $$(RELINK_DIR)/.dir
	$$(CC) $$(RELINK_CFLAGS) -c $$< -o $$@
$$(RELINK_DIR)/asan/%.o: $(1)/%.c $$(RELINK_HDRS) | $$(RELINK_DIR)/asan/.dir
	$$(CC) $$(RELINK_CFLAGS) -DDM_TESTING -O1 $$(SAN_FLAGS) -c $$< -o $$@
endef
$(foreach d,interpose/image interpose/relink,$(eval $(call RELINK_RULES,$(d))))
$(RELINK_DIR)/devmalloc_ptx.o: interpose/relink/devmalloc_ptx.S $(DM_PTX) | $(RELINK_DIR)/.dir
	sha=$$(sha256sum $(DM_PTX) | cut -c1-64 | sed 's/../0x&,/g; s/,$$//') && \
	  $(CC) -c -DDM_PTX_FILE='"$(DM_PTX)"' -DDM_PTX_SHA256="$$sha" $< -o $@
$(RELINK_DIR)/devmalloc_sass.o: interpose/relink/devmalloc_sass.S $(DM_SASS) | $(RELINK_DIR)/.dir
	sha=$$(sha256sum $(DM_SASS) | cut -c1-64 | sed 's/../0x&,/g; s/,$$//') && \
	  $(CC) -c -DDM_SASS_FILE='"$(DM_SASS)"' -DDM_SASS_SHA256="$$sha" $< -o $@
$(RELINK_LIB): $(RELINK_OBJS)
	rm -f $@ && ar rcs $@ $^
$(RELINK_DIR)/libreader.a: $(RELINK_READER_OBJS)
	rm -f $@ && ar rcs $@ $^
$(RELINK_DIR)/libreader-asan.a: $(RELINK_ASAN_OBJS)
	rm -f $@ && ar rcs $@ $^

LIBS += $(RELINK_LIB)

# ---- devmalloc-inspect ----
$(BUILD)/devmalloc-inspect: tools/inspect.c $(RELINK_HDRS) $(RELINK_DIR)/libreader.a
	$(CC) $(RELINK_CFLAGS) $< -o $@ $(RELINK_DIR)/libreader.a $(RELINK_LDLIBS)
TOOLS += $(BUILD)/devmalloc-inspect

# ---- fixtures (nvcc works without a GPU) ----
FX := $(RELINK_DIR)/fixtures
FX_SRC := tests/fixtures
FX_MALLOC := $(FX_SRC)/fx_malloc.cu
FX_FATBINS := $(FX)/malloc_default.fatbin $(FX)/malloc_nocomp.fatbin \
              $(FX)/malloc_zstd_all.fatbin $(FX)/malloc_lz4_all.fatbin \
              $(FX)/malloc_multi.fatbin $(FX)/malloc_ptx.fatbin $(FX)/malloc_elf.fatbin \
              $(FX)/plain_default.fatbin
FX_CUBINS := $(FX)/malloc.cubin $(FX)/plain.cubin $(FX)/devmalloc_rdc.cubin
FX_APPS := $(FX)/app_malloc $(FX)/app_rdc $(FX)/app_plain_lib.so
# -rdc images and relocatable objects: two units for two archs with PTX, a
# dynamic-parallelism library (carrying libcudadevrt's units) and object
# (not carrying them), units of LTO IR only and of PTX only.
FX_RDC := $(FX)/rdc_multi.so $(FX)/rdc_cdp.so $(FX)/rdc_cdp.o $(FX)/rdc_lto.o $(FX)/rdc_ptx.o
FX_PTX := $(FX)/malloc.ptx $(FX)/malloc_sm75.ptx $(FX)/plain.ptx
FIXTURES := $(FX_FATBINS) $(FX_CUBINS) $(FX_APPS) $(FX)/stub_devmalloc.ptx $(FX_RDC) $(FX_PTX)

$(FX)/malloc_default.fatbin: $(FX_MALLOC) | $(FX)/.dir
	$(NVCC) -arch=sm_90 -fatbin $< -o $@
$(FX)/malloc_nocomp.fatbin: $(FX_MALLOC) | $(FX)/.dir
	$(NVCC) -arch=sm_90 --no-compress -fatbin $< -o $@
$(FX)/malloc_zstd_all.fatbin: $(FX_MALLOC) | $(FX)/.dir
	$(NVCC) -arch=sm_90 -Xfatbin -compress-all -fatbin $< -o $@
$(FX)/malloc_lz4_all.fatbin: $(FX_MALLOC) | $(FX)/.dir
	$(NVCC) -arch=sm_90 -Xfatbin -compress-all -compress-mode=speed -fatbin $< -o $@
$(FX)/malloc_multi.fatbin: $(FX_MALLOC) | $(FX)/.dir
	$(NVCC) -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 \
	  -gencode arch=compute_90,code=sm_90 -gencode arch=compute_75,code=compute_75 \
	  -gencode arch=compute_90,code=compute_90 -fatbin $< -o $@
$(FX)/malloc_ptx.fatbin: $(FX_MALLOC) | $(FX)/.dir
	$(NVCC) -gencode arch=compute_90,code=compute_90 -fatbin $< -o $@
$(FX)/malloc_elf.fatbin: $(FX_MALLOC) | $(FX)/.dir
	$(NVCC) -gencode arch=compute_90,code=sm_90 -fatbin $< -o $@
$(FX)/plain_default.fatbin: $(FX_SRC)/fx_plain.cu | $(FX)/.dir
	$(NVCC) -arch=sm_90 -fatbin $< -o $@
$(FX)/malloc.cubin: $(FX_MALLOC) | $(FX)/.dir
	$(NVCC) -arch=sm_90 -cubin $< -o $@
$(FX)/plain.cubin: $(FX_SRC)/fx_plain.cu | $(FX)/.dir
	$(NVCC) -arch=sm_90 -cubin $< -o $@
$(FX)/devmalloc_rdc.cubin: $(FX_SRC)/stub_devmalloc.cu | $(FX)/.dir
	$(NVCC) -arch=sm_90 -rdc=true -cubin $< -o $@
$(FX)/malloc.ptx: $(FX_MALLOC) | $(FX)/.dir
	$(NVCC) -arch=sm_90 -ptx $< -o $@
$(FX)/malloc_sm75.ptx: $(FX_MALLOC) | $(FX)/.dir
	$(NVCC) -arch=sm_75 -ptx $< -o $@
$(FX)/plain.ptx: $(FX_SRC)/fx_plain.cu | $(FX)/.dir
	$(NVCC) -arch=sm_90 -ptx $< -o $@
$(FX)/stub_devmalloc.ptx: $(FX_SRC)/stub_devmalloc.cu | $(FX)/.dir
	$(NVCC) -arch=sm_90 -rdc=true -ptx $< -o $@
$(FX)/app_malloc: $(FX_MALLOC) | $(FX)/.dir
	$(NVCC) -arch=sm_90 $< -o $@
$(FX)/app_rdc: $(FX_MALLOC) | $(FX)/.dir
	$(NVCC) -arch=sm_90 -rdc=true $< -o $@
$(FX)/app_plain_lib.so: $(FX_SRC)/fx_plain.cu | $(FX)/.dir
	$(NVCC) -arch=sm_90 -shared -Xcompiler -fPIC $< -o $@

FX_RDC_AB := $(FX_SRC)/fx_rdc_a.cu $(FX_SRC)/fx_rdc_b.cu
$(FX)/rdc_multi.so: $(FX_RDC_AB) | $(FX)/.dir
	$(NVCC) -shared -Xcompiler -fPIC -rdc=true -gencode arch=compute_80,code=sm_80 \
	  -gencode 'arch=compute_90,code=[sm_90,compute_90]' $(FX_RDC_AB) -o $@
$(FX)/rdc_cdp.so: $(FX_SRC)/fx_rdc_cdp.cu | $(FX)/.dir
	$(NVCC) -shared -Xcompiler -fPIC -rdc=true -arch=sm_90 $< -lcudadevrt -o $@
$(FX)/rdc_cdp.o: $(FX_SRC)/fx_rdc_cdp.cu | $(FX)/.dir
	$(NVCC) -Xcompiler -fPIC -arch=sm_90 -dc $< -o $@
$(FX)/rdc_lto.o: $(FX_SRC)/fx_rdc_b.cu | $(FX)/.dir
	$(NVCC) -Xcompiler -fPIC -gencode arch=compute_90,code=lto_90 -dc $< -o $@
$(FX)/rdc_ptx.o: $(FX_SRC)/fx_rdc_b.cu | $(FX)/.dir
	$(NVCC) -Xcompiler -fPIC -gencode arch=compute_80,code=compute_80 -dc $< -o $@

# ---- host tests ----
RELINK_TDIR := $(RELINK_DIR)/tests
RELINK_TEST_CFLAGS := $(RELINK_CFLAGS) -DDM_TESTING -DFIXTURE_DIR='"$(FX)"'

$(RELINK_TDIR)/test_fatbin: tests/unit/test_fatbin.c tests/unit/relink_test_util.h $(RELINK_DIR)/libreader.a $(FIXTURES) | $(RELINK_TDIR)/.dir
	$(CC) $(RELINK_TEST_CFLAGS) $< -o $@ $(RELINK_DIR)/libreader.a -lcmocka $(RELINK_LDLIBS)
$(RELINK_TDIR)/test_fatbin_asan: tests/unit/test_fatbin.c tests/unit/relink_test_util.h $(RELINK_DIR)/libreader-asan.a $(FIXTURES) | $(RELINK_TDIR)/.dir
	$(CC) $(RELINK_TEST_CFLAGS) -O1 $(SAN_FLAGS) $< -o $@ $(RELINK_DIR)/libreader-asan.a -lcmocka $(RELINK_LDLIBS)
$(RELINK_TDIR)/test_cubin: tests/unit/test_cubin.c tests/unit/relink_test_util.h $(RELINK_DIR)/libreader-asan.a $(FIXTURES) | $(RELINK_TDIR)/.dir
	$(CC) $(RELINK_TEST_CFLAGS) -O1 $(SAN_FLAGS) $< -o $@ $(RELINK_DIR)/libreader-asan.a -lcmocka $(RELINK_LDLIBS)
$(RELINK_TDIR)/test_cache: tests/unit/test_cache.c $(RELINK_DIR)/libreader-asan.a | $(RELINK_TDIR)/.dir
	$(CC) $(RELINK_TEST_CFLAGS) -O1 $(SAN_FLAGS) $< -o $@ $(RELINK_DIR)/libreader-asan.a -lcmocka $(RELINK_LDLIBS)
$(RELINK_TDIR)/test_cache_hostile: tests/unit/test_cache_hostile.c $(RELINK_DIR)/libreader-asan.a | $(RELINK_TDIR)/.dir
	$(CC) $(RELINK_TEST_CFLAGS) -O1 $(SAN_FLAGS) $< -o $@ $(RELINK_DIR)/libreader-asan.a -lcmocka $(RELINK_LDLIBS)
# relink.c and jit_link.c against a fake driver (no GPU): fallbacks and cache.
$(RELINK_TDIR)/test_relink: tests/unit/test_relink.c tests/unit/relink_test_util.h tests/unit/fake_link.h tests/unit/fake_jit.h $(RELINK_LIB) $(OPTIONS_LIB) $(FIXTURES) | $(RELINK_TDIR)/.dir
	$(CC) $(RELINK_TEST_CFLAGS) $< -o $@ $(RELINK_LIB) $(OPTIONS_LIB) -lcmocka $(RELINK_LDLIBS) -lm
$(RELINK_TDIR)/test_relfatbin: tests/unit/test_relfatbin.c tests/unit/relink_test_util.h $(RELINK_DIR)/libreader-asan.a $(FIXTURES) | $(RELINK_TDIR)/.dir
	$(CC) $(RELINK_TEST_CFLAGS) -O1 $(SAN_FLAGS) $< -o $@ $(RELINK_DIR)/libreader-asan.a -lcmocka $(RELINK_LDLIBS)
# The -rdc re-link and devmalloc's SASS against a fake driver.
$(RELINK_TDIR)/test_relink_rdc: tests/unit/test_relink_rdc.c tests/unit/relink_test_util.h tests/unit/fake_link.h tests/unit/fake_jit.h $(RELINK_LIB) $(OPTIONS_LIB) $(FIXTURES) | $(RELINK_TDIR)/.dir
	$(CC) $(RELINK_TEST_CFLAGS) $< -o $@ $(RELINK_LIB) $(OPTIONS_LIB) -lcmocka $(RELINK_LDLIBS) -lm
# devmalloc's malloc and free inlined into nvcc's PTX: compiled by ptxas and
# linked by nvlink with devmalloc's SASS (the toolkit, no GPU).
$(RELINK_TDIR)/test_ptx_inline: tests/unit/test_ptx_inline.c $(RELINK_LIB) $(OPTIONS_LIB) $(FIXTURES) $(DEVICE_SASS) | $(RELINK_TDIR)/.dir
	$(CC) $(RELINK_TEST_CFLAGS) -DPTXAS='"$(PTXAS)"' -DNVLINK='"$(CUDA_HOME)/bin/nvlink"' \
	  -DDEVICE_SASS='"$(DEVICE_SASS)"' $< -o $@ $(RELINK_LIB) $(OPTIONS_LIB) -lcmocka $(RELINK_LDLIBS) -lm
# the re-link with DEVMALLOC_JIT_INLINE=1 against the fake driver
$(RELINK_TDIR)/test_relink_inline: tests/unit/test_relink_inline.c tests/unit/relink_test_util.h tests/unit/fake_link.h tests/unit/fake_jit.h $(RELINK_LIB) $(OPTIONS_LIB) $(FIXTURES) | $(RELINK_TDIR)/.dir
	$(CC) $(RELINK_TEST_CFLAGS) $< -o $@ $(RELINK_LIB) $(OPTIONS_LIB) -lcmocka $(RELINK_LDLIBS) -lm
# the same with a CUDA tool named in CUDA_INJECTION64_PATH: the option not applied
$(RELINK_TDIR)/test_relink_inline_tool: tests/unit/test_relink_inline.c tests/unit/relink_test_util.h tests/unit/fake_link.h tests/unit/fake_jit.h $(RELINK_LIB) $(OPTIONS_LIB) $(FIXTURES) | $(RELINK_TDIR)/.dir
	$(CC) $(RELINK_TEST_CFLAGS) -DDM_UNDER_TOOL $< -o $@ $(RELINK_LIB) $(OPTIONS_LIB) -lcmocka $(RELINK_LDLIBS) -lm
# ... and with a library named as a tool's injection library loaded
$(RELINK_TDIR)/libdmtest-injection.so: | $(RELINK_TDIR)/.dir
	printf 'int dmtest_tool;\n' | $(CC) -shared -fPIC -x c - -o $@
$(RELINK_TDIR)/test_relink_inline_toollib: tests/unit/test_relink_inline.c tests/unit/relink_test_util.h tests/unit/fake_link.h tests/unit/fake_jit.h $(RELINK_LIB) $(OPTIONS_LIB) $(FIXTURES) $(RELINK_TDIR)/libdmtest-injection.so | $(RELINK_TDIR)/.dir
	$(CC) $(RELINK_TEST_CFLAGS) -DDM_TOOL_LIB='"$(abspath $(RELINK_TDIR))/libdmtest-injection.so"' $< -o $@ $(RELINK_LIB) $(OPTIONS_LIB) -lcmocka $(RELINK_LDLIBS) -ldl -lm
$(RELINK_TDIR)/check_inspect: tests/unit/check_inspect.sh $(BUILD)/devmalloc-inspect $(FIXTURES) | $(RELINK_TDIR)/.dir
	printf '#!/bin/sh\nexec bash %s %s %s\n' $< $(BUILD)/devmalloc-inspect $(FX) > $@ && chmod +x $@

RELINK_CHECKS := $(RELINK_TDIR)/test_fatbin $(RELINK_TDIR)/test_fatbin_asan \
                 $(RELINK_TDIR)/test_cubin $(RELINK_TDIR)/test_cache $(RELINK_TDIR)/test_cache_hostile \
                 $(RELINK_TDIR)/test_relink $(RELINK_TDIR)/check_inspect \
                 $(RELINK_TDIR)/test_relfatbin $(RELINK_TDIR)/test_relink_rdc $(RELINK_TDIR)/test_ptx_inline \
                 $(RELINK_TDIR)/test_relink_inline $(RELINK_TDIR)/test_relink_inline_tool \
                 $(RELINK_TDIR)/test_relink_inline_toollib

# ---- fuzz targets (clang libFuzzer) ----
# One per reader of untrusted bytes: the fatbin/cubin reader (fatbin), the
# load-time pre-scan of unsized images (prescan), the registration wrapper
# (wrapper), the re-link input paths (relink) and the cache entry reader
# (cache_entry). `make check` runs each FUZZ_CHECK_TIME seconds (when clang
# works); `make fuzz FUZZ_TIME=600` runs each longer. Corpora persist under
# $(RELINK_DIR)/fuzz/work; crash reproducers land there too.
FUZZ_CC ?= clang
FUZZ_TIME ?= 20
FUZZ_CHECK_TIME ?= 4
FUZZ_DIR := $(RELINK_DIR)/fuzz
FUZZ_TARGETS := fatbin prescan wrapper relink cache_entry
FUZZ_BINS := $(FUZZ_TARGETS:%=$(FUZZ_DIR)/fuzz_%)
FUZZ_FLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -Itests/unit \
              -fno-sanitize-recover=all $(CPPFLAGS) $(SHIM_INC) -DDM_IMAGE_MAX='((size_t)1<<24)'
SCAN_SRCS := interpose/image/image_bound.c interpose/image/image_scan.c
FUZZ_SRCS_fatbin := $(RELINK_READER_SRCS)
FUZZ_SRCS_prescan := $(SCAN_SRCS)
FUZZ_SRCS_wrapper := $(SCAN_SRCS) $(RELINK_READER_SRCS)
FUZZ_SRCS_relink := $(SCAN_SRCS) $(RELINK_SRCS) $(OPTIONS_SRCS) $(DM_CODE_OBJS)
FUZZ_SRCS_cache_entry := interpose/relink/cache.c interpose/relink/cache_dir.c interpose/relink/sha256.c \
                         interpose/relink/crc32c.c
# Each source is compiled once for all the targets that link it.
FUZZ_OBJS = $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(notdir $(filter %.c,$(1)))) $(filter %.o,$(1))
define FUZZ_OBJ_RULE
$$(FUZZ_DIR)/obj/%.o: $(1)/%.c $$(RELINK_HDRS) $$(SHIM_HDRS) | $$(FUZZ_DIR)/obj/.dir
	$$(FUZZ_CC) $$(FUZZ_FLAGS) -c $$< -o $$@
endef
$(foreach d,interpose/image interpose/relink host/options,$(eval $(call FUZZ_OBJ_RULE,$(d))))
define FUZZ_BIN_RULE
$$(FUZZ_DIR)/fuzz_$(1): tests/fuzz/fuzz_$(1).c tests/fuzz/guarded.h tests/unit/fake_jit.h \
    $$(RELINK_HDRS) $$(SHIM_HDRS) $$(call FUZZ_OBJS,$$(FUZZ_SRCS_$(1))) | $$(FUZZ_DIR)/.dir
	$$(FUZZ_CC) $$(FUZZ_FLAGS) $$< $$(call FUZZ_OBJS,$$(FUZZ_SRCS_$(1))) -o $$@ $$(RELINK_LDLIBS) -lm
endef
$(foreach t,$(FUZZ_TARGETS),$(eval $(call FUZZ_BIN_RULE,$(t))))
$(FUZZ_DIR)/corpus/.stamp: $(FIXTURES) $(wildcard tests/fuzz/seeds/*) | $(FUZZ_DIR)/.dir
	mkdir -p $(dir $@) && cp $(FX_FATBINS) $(FX_CUBINS) $(FX)/stub_devmalloc.ptx $(dir $@) && \
	  cp tests/fuzz/seeds/* $(dir $@) 2>/dev/null; touch $@
FUZZ_RUN = bash tests/fuzz/run_bounded.sh
# Bounded fuzzing (seeds, saved crashers, then new inputs) in `make check`.
# clang is looked for when the check runs, after tools/setup-deps.sh has
# installed it (not when this file is read); without it the check says so.
.PHONY: fuzz-bins $(RELINK_TDIR)/fuzz_check
fuzz-bins: $(FUZZ_BINS) $(FUZZ_DIR)/corpus/.stamp
$(RELINK_TDIR)/fuzz_check: tests/fuzz/run_bounded.sh | $(RELINK_TDIR)/.dir
	@if command -v $(FUZZ_CC) >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory fuzz-bins && \
	  printf '#!/bin/sh\nexec %s %s %s %s %s\n' "$(FUZZ_RUN)" $(FUZZ_CHECK_TIME) \
	    $(FUZZ_DIR)/work $(FUZZ_DIR)/corpus "$(FUZZ_BINS)" > $@; \
	else printf '#!/bin/sh\necho "fuzz: $(FUZZ_CC) not found: skipped"\n' > $@; fi
	@chmod +x $@
RELINK_CHECKS += $(RELINK_TDIR)/fuzz_check

.PHONY: fuzz
fuzz: $(FUZZ_BINS) $(FUZZ_DIR)/corpus/.stamp
	$(FUZZ_RUN) $(FUZZ_TIME) $(FUZZ_DIR)/work $(FUZZ_DIR)/corpus $(FUZZ_BINS)

CHECK_BINS += $(RELINK_CHECKS)

# ---- GPU case programs: plain nvcc, unchanged by devmalloc ----
$(BUILD)/gpu/jit_alloc: tests/gpu/progs/jit_alloc.cu | $(BUILD)/gpu/.dir
	$(NVCC) -arch=sm_90 $< -o $@
$(BUILD)/gpu/jit_alloc_sass_only: tests/gpu/progs/jit_alloc.cu | $(BUILD)/gpu/.dir
	$(NVCC) -gencode arch=compute_90,code=sm_90 $< -o $@
GPU_BINS += $(BUILD)/gpu/jit_alloc $(BUILD)/gpu/jit_alloc_sass_only $(BUILD)/devmalloc-inspect
