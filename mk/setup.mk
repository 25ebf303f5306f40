# mk/setup.mk — a new user's first steps, checked without a GPU:
#   - the dependency script tells required packages from optional ones
#     (tests/unit/check_setup_deps.sh);
#   - the docs' words agree with the program (tests/unit/check_doc_words.sh);
#   - the README's commands as printed, in a copy of this tree with its build
#     (tools/first-hour.sh --tree: install, the relink recipe, the CMake
#     snippet, inspect, uninstall; the GPU steps only where there is none,
#     to see them say so).
# `make first-hour` runs tools/first-hour.sh in a scratch clone of this
# checkout, `make check` and the GPU goals included.

$(BUILD)/tests/check_setup_deps: tests/unit/check_setup_deps.sh tools/setup-deps.sh | $(BUILD)/tests/.dir
	printf '#!/bin/sh\nexec bash %s\n' $< > $@ && chmod +x $@
$(BUILD)/tests/check_doc_words: tests/unit/check_doc_words.sh $(BUILD)/devmalloc | $(BUILD)/tests/.dir
	printf '#!/bin/sh\nexec bash %s %s\n' $< $(BUILD) > $@ && chmod +x $@
$(BUILD)/tests/check_first_hour: tools/first-hour.sh README.md $(LIBS) $(TOOLS) | $(BUILD)/tests/.dir
	printf '#!/bin/sh\nexec bash %s --tree . --no-gpu\n' $< > $@ && chmod +x $@
CHECK_BINS += $(BUILD)/tests/check_setup_deps $(BUILD)/tests/check_doc_words $(BUILD)/tests/check_first_hour

.PHONY: first-hour
first-hour:
	bash tools/first-hour.sh
