#!/usr/bin/env bash
# check_no_test_hooks.sh FILE... — the shipped products define no test hook:
# nothing that a header declares under #ifdef DM_TESTING (compiled only into
# test builds) and nothing named *_for_tests. Looks at the symbol table and
# at the dynamic one. Run from the repository root (make check does).
set -u
hooks=$(find device host include interpose -name '*.h' -exec awk '
    /^#ifdef DM_TESTING/ {t = 1; next}
    t && /^#endif/ {t = 0}
    t && match($0, /[A-Za-z_][A-Za-z0-9_]*\(/) {print substr($0, RSTART, RLENGTH - 1)}' {} + | sort -u)
[ -n "$hooks" ] || { echo "FAIL no header declares a test hook under #ifdef DM_TESTING"; exit 1; }
echo "test hooks declared: $(echo $hooks)"
status=0
for f in "$@"; do
  syms=$( { nm "$f" 2>/dev/null; nm -D "$f" 2>/dev/null; } | awk '$2 ~ /^[TtDdBbWw]$/ {print $3}' | sort -u)
  found=$( { grep -xF -f <(echo "$hooks") <<<"$syms"; grep -E '_for_tests$' <<<"$syms"; } | sort -u)
  if [ -n "$found" ]; then
    echo "FAIL $f defines test hooks: $(echo $found)"; status=1
  else
    echo "ok   $f: no test hooks"
  fi
done
exit $status
