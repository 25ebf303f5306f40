# devmalloc — top-level Makefile.
#
#   make            build host runtime, device library (rdc .a, .ptx, LTO-IR), shim and tools
#   make check      build and run the host test suite (no GPU needed; installs missing deps)
#   make gpu-check  build and run the GPU suite (needs a GPU: tests/gpu/run.sh)
#   make bench      A/B benchmark stock vs devmalloc (needs a GPU)
#   make soak       minutes of load under the shim and relinked, checked as it runs (needs a GPU)
#   make first-hour the README's commands in a scratch clone, each step's result (tools/first-hour.sh)
#   make install    install into $(PREFIX) (default /usr/local)
#   make uninstall  remove what install put there (and the directories it made, when empty)
#   make format     reformat the C/CUDA sources with .clang-format (clang-format)
#   make format-check  list the sources clang-format would change (exit 1 if any)
#   make clean
#
#   V=1             show the commands and ptxas's figures for every device
#                   function (quiet otherwise: a line per test, failures in full)
#   JOBS=N          jobs at once (default: the number of cores; -jN also works)
#   FORMAT_GATE=0   make check does not check the sources' format (default 1:
#                   it fails on a source clang-format would change; mk/format.mk)
#
# Each part of the tree adds its own rules in mk/<part>.mk, named after the
# folder it builds (host/heap/: mk/host_heap.mk), and appends to the lists
# below; nothing else needs to change when a part is added. The parts are
# read in the order of their names.

PREFIX ?= /usr/local
BUILD  ?= build
V      ?= 0

# Parallel by default (a -j on the command line wins); sub-makes share the
# jobs of the top one. Each target's output comes in one piece, but for the
# goals that run long and report as they go.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
ifeq ($(MAKELEVEL),0)
MAKEFLAGS += -j$(JOBS)
ifeq ($(filter gpu-check bench soak fuzz first-hour,$(MAKECMDGOALS)),)
MAKEFLAGS += --output-sync=target
endif
endif
# Quiet by default: no command lines (V=1 shows them).
ifneq ($(V),1)
.SILENT:
endif

# Lists the parts append to.
LIBS        :=   # products built by `all`
CHECK_BINS  :=   # host test executables run by `check` (each must exit 0)
GPU_BINS    :=   # programs the GPU suite needs (built by `gpu-build`)
TOOLS       :=   # user-facing programs

.DEFAULT_GOAL := all

# gpu-check, bench and soak look for a GPU before anything is built: without one
# they stop at once with one line (exit 2).
GPU_GOALS := $(filter gpu-check bench soak,$(MAKECMDGOALS))
ifneq ($(GPU_GOALS),)
NO_GPU := $(shell bash tools/need-gpu.sh "make $(firstword $(GPU_GOALS))" 2>&1 >/dev/null)
$(if $(NO_GPU),$(error $(NO_GPU)))
endif

include mk/config.mk
include $(sort $(filter-out mk/config.mk,$(wildcard mk/*.mk)))

.PHONY: all check gpu-build gpu-check bench soak install uninstall clean deps format format-check

all: deps $(LIBS) $(TOOLS)

# What the goals need (tools/setup-deps.sh --for): the host tests need cmocka
# and use the optional packages; the GPU goals name the optional ones they
# miss; a tree already built needs none of the build's packages.
DEPS_FOR := $(if $(filter check,$(MAKECMDGOALS)),check,$(if $(GPU_GOALS),gpu,build))
deps:
	@built=; $(MAKE) -q --no-print-directory $(LIBS) $(TOOLS) >/dev/null 2>&1 && built=--built; \
	  $(DEPS_CHECK) --for $(DEPS_FOR) $$built

# Each test program runs as soon as it is built, beside the others; its output
# goes to $(LOG_DIR)/<name>.log and is shown only when it fails. The last line
# is the summary; make check fails when a test did.
LOG_DIR    := $(BUILD)/logs
CHECK_LOGS := $(addprefix $(LOG_DIR)/,$(addsuffix .log,$(notdir $(CHECK_BINS))))
$(if $(filter-out $(words $(sort $(CHECK_BINS))),$(words $(sort $(notdir $(CHECK_BINS))))),\
  $(error two test programs share a name: $(sort $(notdir $(CHECK_BINS)))))
define CHECK_RUN_RULE
$(LOG_DIR)/$(notdir $(1)).log: $(1) check-always | $(LOG_DIR)/.dir
	bash tests/run_test.sh $(1) $$@
endef
$(foreach t,$(sort $(CHECK_BINS)),$(eval $(call CHECK_RUN_RULE,$(t))))
.PHONY: check-always
check-always:

check: deps $(CHECK_LOGS)
	bash tests/run_test.sh --summary $(CHECK_LOGS)

gpu-build: all $(GPU_BINS)

gpu-check: gpu-build
	bash tests/gpu/run.sh

bench: gpu-build
	bash bench/run.sh $(BENCH_ARGS)

soak: gpu-build
	bash tests/gpu/soak.sh

install: all
	@$(INSTALL_DIRS_STEP)
	$(INSTALL_STEPS)

uninstall:
	$(UNINSTALL_STEPS)

clean:
	rm -rf $(BUILD)
