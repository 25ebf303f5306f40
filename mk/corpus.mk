# mk/corpus.mk — the corpus of realistic programs (tests/gpu/corpus/), each
# built two ways:
#   $(BUILD)/corpus/<prog>.stock     plain nvcc (static cudart), no devmalloc
#   $(BUILD)/corpus/<prog>.relinked  -rdc=true, device-linked with libdevmalloc_device.a
#                                    (-DUSE_DEVMALLOC_INIT: CORPUS_DEVMALLOC_INIT=1 makes
#                                    it call devmalloc_cuda_init itself)
# Run three ways (stock; relinked under the shim; stock under the shim) by
# tests/gpu/cases/20_corpus.sh. `make check` builds them and checks that the
# relinked binaries define no host malloc/free (tests/gpu/corpus/check_build.sh),
# and checks the case's verdicts with fake programs (tests/gpu/corpus/selftest.sh).

CORPUS_DIR  := $(BUILD)/corpus
CORPUS_SRC  := tests/gpu/corpus
# Quiet builds leave out nvlink's note on recursive kernels' stacks (V=1 shows it).
CORPUS_NV   := $(NVCC) -O2 -std=c++17 -gencode 'arch=compute_90,code=[sm_90,compute_90]' \
               $(if $(filter 1,$(V)),,-Xnvlink -suppress-stack-size-warning)
CORPUS_RDC  := -rdc=true -DUSE_DEVMALLOC_INIT -Iinclude
CORPUS_RLIBS := $(DEVICE_LIB) $(HOST_LIB) -lcuda
CORPUS_DEPS := $(CORPUS_SRC)/corpus.h tests/gpu/progs/cuda_ck.h

# Single-file programs; per-program flags (both builds) and libraries.
CORPUS_SIMPLE := raytrace recurse polyobj scratch hashtable growarray exhaust streams cdp thrust_cub plainreads
CORPUS_FLAGS_raytrace := -fmad=false
CORPUS_FLAGS_streams  := --default-stream per-thread
CORPUS_LIBS_streams   := -lpthread
CORPUS_FLAGS_cdp      := -rdc=true
CORPUS_LIBS_cdp       := -lcudadevrt

$(CORPUS_DIR)/%.stock: $(CORPUS_SRC)/%.cu $(CORPUS_DEPS) | $(CORPUS_DIR)/.dir
	$(CORPUS_NV) $(CORPUS_FLAGS_$*) $< -o $@ $(CORPUS_LIBS_$*)
$(CORPUS_DIR)/%.relinked: $(CORPUS_SRC)/%.cu $(CORPUS_DEPS) $(DEVICE_LIB) $(HOST_LIB) | $(CORPUS_DIR)/.dir
	$(CORPUS_NV) $(CORPUS_FLAGS_$*) $(CORPUS_RDC) $< $(CORPUS_RLIBS) -o $@ $(CORPUS_LIBS_$*)

# skiplist: three -rdc translation units (stock builds them with -rdc too).
SKIPLIST_SRCS := $(addprefix $(CORPUS_SRC)/skiplist/,skiplist_main.cu skiplist_ops.cu skiplist_verify.cu)
SKIPLIST_DEPS := $(SKIPLIST_SRCS) $(CORPUS_SRC)/skiplist/skiplist.h $(CORPUS_DEPS)
$(CORPUS_DIR)/skiplist.stock: $(SKIPLIST_DEPS) | $(CORPUS_DIR)/.dir
	$(CORPUS_NV) -rdc=true $(SKIPLIST_SRCS) -o $@
$(CORPUS_DIR)/skiplist.relinked: $(SKIPLIST_DEPS) $(DEVICE_LIB) $(HOST_LIB) | $(CORPUS_DIR)/.dir
	$(CORPUS_NV) $(CORPUS_RDC) $(SKIPLIST_SRCS) $(CORPUS_RLIBS) -o $@

# plugin: two -rdc translation units and a shared library with its own device
# code (stock/ and relinked/ hold the two builds of the library). The library
# is built with hidden visibility, as libraries are: a relinked library that
# exported its device-link registration functions would have them interposed by
# the executable's (the same devmalloc object, the same module id, in both).
PLUGIN_SRCS := $(addprefix $(CORPUS_SRC)/plugin/,plugin_main.cu particles.cu)
PLUGIN_DEPS := $(CORPUS_SRC)/plugin/plugin.h $(CORPUS_DEPS)
$(CORPUS_DIR)/stock/libcorpus_plugin.so: $(CORPUS_SRC)/plugin/plugin_lib.cu $(PLUGIN_DEPS) | $(CORPUS_DIR)/stock/.dir
	$(CORPUS_NV) -shared -Xcompiler -fPIC,-fvisibility=hidden $< -o $@
$(CORPUS_DIR)/relinked/libcorpus_plugin.so: $(CORPUS_SRC)/plugin/plugin_lib.cu $(PLUGIN_DEPS) $(DEVICE_LIB) | $(CORPUS_DIR)/relinked/.dir
	$(CORPUS_NV) -shared -Xcompiler -fPIC,-fvisibility=hidden -rdc=true $< $(DEVICE_LIB) -o $@
$(CORPUS_DIR)/plugin.stock: $(PLUGIN_SRCS) $(PLUGIN_DEPS) $(CORPUS_DIR)/stock/libcorpus_plugin.so
	$(CORPUS_NV) -rdc=true $(PLUGIN_SRCS) -L$(CORPUS_DIR)/stock -lcorpus_plugin -Xlinker -rpath,'$$ORIGIN/stock' -o $@
$(CORPUS_DIR)/plugin.relinked: $(PLUGIN_SRCS) $(PLUGIN_DEPS) $(CORPUS_DIR)/relinked/libcorpus_plugin.so $(DEVICE_LIB) $(HOST_LIB)
	$(CORPUS_NV) $(CORPUS_RDC) $(PLUGIN_SRCS) $(CORPUS_RLIBS) -L$(CORPUS_DIR)/relinked -lcorpus_plugin \
	  -Xlinker -rpath,'$$ORIGIN/relinked' -o $@

# modules: a driver-API program; its kernels come from a PTX file and NVRTC.
# The relinked build links each PTX with $(DEVICE_PTX) through cuLink* itself.
$(CORPUS_DIR)/modules_kern.ptx: $(CORPUS_SRC)/modules/modules_kern.cu | $(CORPUS_DIR)/.dir
	$(NVCC) -O2 -arch=compute_90 -ptx $< -o $@
$(CORPUS_DIR)/modules.stock: $(CORPUS_SRC)/modules/modules.cu $(CORPUS_DEPS) tests/gpu/progs/cu_ck.h $(CORPUS_DIR)/modules_kern.ptx
	$(CORPUS_NV) $< -lcuda -lnvrtc -Xlinker -rpath,$(CUDA_LIBDIR) -o $@
$(CORPUS_DIR)/modules.relinked: $(CORPUS_SRC)/modules/modules.cu $(CORPUS_DEPS) tests/gpu/progs/cu_ck.h $(CORPUS_DIR)/modules_kern.ptx $(DEVICE_PTX)
	$(CORPUS_NV) -DLINK_DEVMALLOC $< -lcuda -lnvrtc -Xlinker -rpath,$(CUDA_LIBDIR) -o $@

# cmake_rdc: a CMake project (CUDA_SEPARABLE_COMPILATION ON, two shared
# libraries with device code). $(CORPUS_DIR)/cmake_rdc.WAY links to the
# executable in its build tree (its libraries are found by $$ORIGIN). Where
# cmake is missing, the same targets are built by nvcc directly.
CMAKE ?= $(shell command -v cmake 2>/dev/null)
CMRDC_SRC := $(CORPUS_SRC)/cmake_rdc
CMRDC_DEPS := $(wildcard $(CMRDC_SRC)/*) $(CORPUS_DEPS)
CMRDC_LINK_stock :=
CMRDC_LINK_relinked := $(abspath $(DEVICE_LIB))
CMRDC_NVCC = $(NVCC) -O2 -std=c++17 -gencode 'arch=compute_90,code=[sm_90,compute_90]' -rdc=true \
  -I$(CORPUS_SRC) -I$(CMRDC_SRC) -Xcompiler -fPIC,-fvisibility=hidden
define CMRDC_RULE
$$(CORPUS_DIR)/cmake_rdc.$(1): $$(CMRDC_DEPS) $(if $(filter relinked,$(1)),$$(DEVICE_LIB)) | $$(CORPUS_DIR)/.dir
	rm -rf $$(CORPUS_DIR)/cmake_rdc/$(1) && mkdir -p $$(CORPUS_DIR)/cmake_rdc/$(1)
	if [ -n "$$(CMAKE)" ]; then \
	  $$(CMAKE) -S $$(CMRDC_SRC) -B $$(CORPUS_DIR)/cmake_rdc/$(1) -DCMAKE_CUDA_COMPILER=$$(NVCC) \
	    -DCMAKE_BUILD_TYPE=Release -DDEVMALLOC_LINK="$$(CMRDC_LINK_$(1))" >/dev/null && \
	  $$(MAKE) -C $$(CORPUS_DIR)/cmake_rdc/$(1) --no-print-directory >/dev/null; \
	else d=$$(CORPUS_DIR)/cmake_rdc/$(1) && echo "cmake not found: cmake_rdc built by nvcc" && \
	  $$(CMRDC_NVCC) -shared -Xlinker -Bsymbolic $$(CMRDC_SRC)/graph_build.cu $$(CMRDC_SRC)/graph_weight.cu \
	    $$(CMRDC_LINK_$(1)) -o $$$$d/libcr_graph.so && \
	  $$(CMRDC_NVCC) -shared -Xlinker -Bsymbolic $$(CMRDC_SRC)/text_words.cu $$(CMRDC_LINK_$(1)) -o $$$$d/libcr_text.so && \
	  $$(CMRDC_NVCC) $$(CMRDC_SRC)/main.cu $$(CMRDC_SRC)/tally.cu $$(CMRDC_LINK_$(1)) -L$$$$d -lcr_graph -lcr_text \
	    -Xlinker -rpath,'$$$$ORIGIN' -o $$$$d/cmake_rdc; fi
	ln -sf cmake_rdc/$(1)/cmake_rdc $$@
endef
$(eval $(call CMRDC_RULE,stock))
$(eval $(call CMRDC_RULE,relinked))

CORPUS_PROGS := $(CORPUS_SIMPLE) skiplist plugin modules cmake_rdc
CORPUS_BINS  := $(foreach p,$(CORPUS_PROGS),$(CORPUS_DIR)/$(p).stock $(CORPUS_DIR)/$(p).relinked)

$(CORPUS_DIR)/check_build: $(CORPUS_SRC)/check_build.sh $(CORPUS_BINS)
	printf '#!/bin/sh\nexec bash %s %s "%s"\n' $(CORPUS_SRC)/check_build.sh $(CORPUS_DIR) "$(CORPUS_PROGS)" >$@ && chmod +x $@

.PHONY: corpus
corpus: $(CORPUS_BINS)

# mpi_ranks: an MPI program (GPU case 23_mpi), built against the Open MPI that
# tools/setup-deps.sh unpacks into $(CORPUS_MPI) (its mpi.h and libmpi; at run
# time its env.sh gives the library path). Without that folder it is not built
# and one line says so.
CORPUS_MPI := $(BUILD)/mpi-root
MPI_RANKS_FLAGS_relinked := $(CORPUS_RDC)
MPI_RANKS_LIBS_relinked  := $(CORPUS_RLIBS)
define MPI_RANKS_RULE
$$(CORPUS_DIR)/mpi_ranks.$(1): $$(CORPUS_SRC)/mpi_ranks.cu $$(CORPUS_DEPS) $(if $(filter relinked,$(1)),$$(DEVICE_LIB) $$(HOST_LIB)) | $$(CORPUS_DIR)/.dir
	inc=$$$$(ls -d $$(CORPUS_MPI)/usr/lib/*/openmpi/include 2>/dev/null | head -1); \
	if [ -f $$(CORPUS_MPI)/env.sh ] && [ -f "$$$$inc/mpi.h" ]; then \
	  $$(CORPUS_NV) $$(MPI_RANKS_FLAGS_$(1)) -I"$$$$inc" $$< $$(MPI_RANKS_LIBS_$(1)) -L"$$$$inc/../lib" -lmpi \
	    -Xlinker -rpath-link,"$$$$inc/../lib:$$$$inc/../..:$$$$inc/../../pmix2/lib" -o $$@; \
	else rm -f $$@; echo "mpi_ranks.$(1): not built: no Open MPI in $$(CORPUS_MPI) (tools/setup-deps.sh --for check unpacks it)"; fi
endef
$(eval $(call MPI_RANKS_RULE,stock))
$(eval $(call MPI_RANKS_RULE,relinked))
MPI_RANKS_BINS := $(CORPUS_DIR)/mpi_ranks.stock $(CORPUS_DIR)/mpi_ranks.relinked
corpus: $(MPI_RANKS_BINS)
# The MPI folder, the two builds and the case's verdicts, with the real mpirun
# and fake programs (no GPU); skipped without the folder.
$(CORPUS_DIR)/check_mpi: $(CORPUS_SRC)/check_mpi.sh tests/gpu/cases/23_mpi.sh $(MPI_RANKS_BINS) | $(CORPUS_DIR)/.dir
	printf '#!/bin/sh\nexec bash %s %s\n' $(CORPUS_SRC)/check_mpi.sh $(BUILD) >$@ && chmod +x $@

# The GPU case's verdicts, checked with fake programs (no GPU, no nvcc).
$(CORPUS_DIR)/selftest: $(CORPUS_SRC)/selftest.sh $(CORPUS_SRC)/corpus_lib.sh tests/gpu/cases/20_corpus.sh | $(CORPUS_DIR)/.dir
	printf '#!/bin/sh\nexec bash %s\n' $(CORPUS_SRC)/selftest.sh >$@ && chmod +x $@

GPU_BINS   += $(CORPUS_BINS) $(MPI_RANKS_BINS)
CHECK_BINS += $(CORPUS_DIR)/check_build $(CORPUS_DIR)/selftest $(CORPUS_DIR)/check_mpi
