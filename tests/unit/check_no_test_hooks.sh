#!/usr/bin/env bash
# check_no_test_hooks.sh FILE... — the shipped products define no test hook
# (*_for_tests, dm_cache_test_*): those are compiled only into test builds
# (-DDM_TESTING). Looks at the symbol table and at the dynamic one.
set -u
status=0
for f in "$@"; do
  hooks=$( { nm "$f" 2>/dev/null; nm -D "$f" 2>/dev/null; } | awk '$2 ~ /^[TtDdBb]$/ {print $3}' |
    grep -E '_for_tests$|^dm_[a-z_]*_test_' | sort -u)
  if [ -n "$hooks" ]; then
    echo "FAIL $f defines test hooks: $(echo $hooks)"; status=1
  else
    echo "ok   $f: no test hooks"
  fi
done
exit $status
