# mk/format.mk — the C/CUDA sources' format (.clang-format at the root;
# tools/format.sh):
#   make format        rewrite every source in place with clang-format
#   make format-check  list the sources clang-format would change; exit 1 if any
# format-check is one of make check's tests (FORMAT_GATE=0 leaves it out);
# without clang-format (an optional package) it skips, saying so.

FORMAT_GATE ?= 1

.PHONY: format format-check
format:
	bash tools/format.sh $(JOBS)
format-check:
	bash tools/format.sh --check $(JOBS)

$(BUILD)/tests/check_format: tools/format.sh .clang-format | $(BUILD)/tests/.dir
	printf '#!/bin/sh\nexec bash %s --check\n' $< >$@ && chmod +x $@
ifeq ($(FORMAT_GATE),1)
CHECK_BINS += $(BUILD)/tests/check_format
endif
