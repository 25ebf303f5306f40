# mk/setup.mk — a new user's first steps, checked without a GPU:
#   - the dependency script tells required packages from optional ones
#     (tests/unit/check_setup_deps.sh);
#   - the docs' words agree with the program (tests/unit/check_doc_words.sh).

$(BUILD)/tests/check_setup_deps: tests/unit/check_setup_deps.sh tools/setup-deps.sh | $(BUILD)/tests/.dir
	printf '#!/bin/sh\nexec bash %s\n' $< > $@ && chmod +x $@
$(BUILD)/tests/check_doc_words: tests/unit/check_doc_words.sh $(BUILD)/devmalloc | $(BUILD)/tests/.dir
	printf '#!/bin/sh\nexec bash %s %s\n' $< $(BUILD) > $@ && chmod +x $@
CHECK_BINS += $(BUILD)/tests/check_setup_deps $(BUILD)/tests/check_doc_words

