# mk/format.mk — the C/CUDA sources' format (.clang-format at the root):
#   make format        rewrite every source in place with clang-format
#   make format-check  list the sources clang-format would change; exit 1 if any
# make check runs format-check when FORMAT_GATE=1 (default 0: the tree is not
# formatted yet; the switch goes on once it is).

CLANG_FORMAT ?= clang-format
FORMAT_GATE  ?= 0
# The tracked sources (all but build outputs); without git, those under the
# source folders. Expanded only when a format goal runs.
FORMAT_EXTS  := c h cu cuh cpp
FORMAT_SRCS   = $(shell git ls-files $(FORMAT_EXTS:%='*.%') 2>/dev/null || \
                  find bench device host include interpose tests tools $(FORMAT_EXTS:%=-name '*.%' -o) -false)
FORMAT_NEED   = command -v $(CLANG_FORMAT) >/dev/null || \
                  { echo "format: $(CLANG_FORMAT) not found (apt-get install clang-format)"; exit 2; }

.PHONY: format format-check
format:
	$(FORMAT_NEED)
	printf '%s\n' $(FORMAT_SRCS) | xargs -r -P $(JOBS) -n 16 $(CLANG_FORMAT) -i --style=file

format-check:
	$(FORMAT_NEED)
	bad=$$(printf '%s\n' $(FORMAT_SRCS) | xargs -r -P $(JOBS) -I{} sh -c \
	  '$(CLANG_FORMAT) --style=file "{}" | cmp -s "{}" - || echo "{}"' | sort); \
	if [ -n "$$bad" ]; then echo "$$bad" | sed 's/^/not formatted: /'; \
	  echo "format-check: $$(echo "$$bad" | wc -l) of $(words $(FORMAT_SRCS)) files not formatted (make format fixes them)"; \
	  exit 1; fi; \
	echo "format-check: $(words $(FORMAT_SRCS)) files formatted"
