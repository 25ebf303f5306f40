# mk/report.mk — `devmalloc report` (tools/devmalloc_report.py: heap trace
# summary and PNG plots) and its host check. The shim's stats/trace/NVTX
# code and its test are in mk/interpose_driver.mk.

OBS_CHECK := $(BUILD)/tests/check_report
$(OBS_CHECK): tests/unit/check_report.sh tools/devmalloc tools/devmalloc_report.py \
              tests/unit/fixtures/trace_churn.jsonl | $(BUILD)/tests/.dir
	printf '#!/bin/sh\nexec bash %s %s\n' $< tools/devmalloc > $@ && chmod +x $@

CHECK_BINS += $(OBS_CHECK)

INSTALL_STEPS += install -m 644 tools/devmalloc_report.py $(DESTDIR)$(PREFIX)/share/devmalloc/ ;

# ---- GPU test program (tests/gpu/cases/80_observe.sh) ----
OBS_GPU := $(BUILD)/gpu/observe
$(OBS_GPU)/obs_fault: tests/gpu/progs/obs_fault.cu $(DEVICE_LIB) | $(OBS_GPU)/.dir
	$(NVCC) -O2 -std=c++17 -arch=sm_90 -rdc=true $< $(DEVICE_LIB) -o $@
GPU_BINS += $(OBS_GPU)/obs_fault
INSTALLED_FILES += share/devmalloc/devmalloc_report.py
