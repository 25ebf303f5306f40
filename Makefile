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
#   make clean
#   V=1             ptxas's figures for every device function (quiet otherwise)
#
# Each part of the tree adds its own rules in mk/<part>.mk and appends to the
# lists below; nothing else needs to change when a part is added.

PREFIX ?= /usr/local
BUILD  ?= build

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

.PHONY: all check gpu-build gpu-check bench soak install uninstall clean deps

all: deps $(LIBS) $(TOOLS)

# What the goals need (tools/setup-deps.sh --for): the host tests need cmocka
# and use the optional packages; the GPU goals name the optional ones they
# miss; a tree already built needs none of the build's packages.
DEPS_FOR := $(if $(filter check,$(MAKECMDGOALS)),check,$(if $(GPU_GOALS),gpu,build))
deps:
	@built=; $(MAKE) -q --no-print-directory $(LIBS) $(TOOLS) >/dev/null 2>&1 && built=--built; \
	  $(DEPS_CHECK) --for $(DEPS_FOR) $$built

check: deps $(CHECK_BINS)
	@set -e; pass=0; for t in $(CHECK_BINS); do \
	  echo "== $$t"; $$t; pass=$$((pass+1)); done; \
	echo "host tests: $$pass programs passed"

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
