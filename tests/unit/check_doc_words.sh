#!/usr/bin/env bash
# check_doc_words.sh — what the docs say agrees with what the program does
# or prints: the trace file is created or replaced (docs/options.md and
# `devmalloc --help` alike), DEVMALLOC_VERBOSE's levels are the same in both,
# the installed CMake package says older architectures fail to link (they
# do: check_relink_products), and the README says what the names it cites
# are at their first mention (PPoPP, XMalloc, Gallatin, "the peer").
#   check_doc_words.sh BUILD_DIR      (run from the repository root)
set -u
B=$1 fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
help=$("$B/devmalloc" --help)
entry() { awk -v v="  $1  (default" 'index($0, v) == 1 { on = 1; print; next } on && /^      / { print; next } { on = 0 }' <<<"$help"; }
section() { awk -v h="## $1" 'index($0, h) == 1 { on = 1; next } /^## / { on = 0 } on' docs/options.md; }

t=$(entry DEVMALLOC_TRACE) d=$(section DEVMALLOC_TRACE)
if grep -q "created or replaced" <<<"$t" && grep -q "created or replaced" <<<"$d" && ! grep -qi append <<<"$t$d"; then
  ok "DEVMALLOC_TRACE: created or replaced, in --help and docs/options.md"
else bad "DEVMALLOC_TRACE: --help '$t' / docs disagree"; fi

hmax=$(entry DEVMALLOC_VERBOSE | sed -n 's/^ *values: //p' | sed 's/(.*//' | grep -o '[0-9]' | sort -n | tail -1)
dmax=$(section DEVMALLOC_VERBOSE | grep -o '`[0-9]`:' | tr -dc '0-9\n' | sort -n | tail -1)
[ -n "$hmax" ] && [ "$hmax" = "$dmax" ] && ok "DEVMALLOC_VERBOSE: levels 0..$hmax in --help and docs/options.md" ||
  bad "DEVMALLOC_VERBOSE: --help up to '$hmax', docs/options.md up to '$dmax'"

c=$(grep -A3 -i "older architectures" tools/pkg/devmalloc-config.cmake.in)
grep -q "fail" <<<"$c" && grep -q "devmalloc_needs_sm_80_or_newer" <<<"$c" &&
  ok "devmalloc-config.cmake: older architectures fail to link, naming the reason" ||
  bad "devmalloc-config.cmake on older architectures: '$c'"

# NAME|a word that says what it is, within two lines of its first mention
for w in "PPoPP|symposium" "XMalloc|allocator" "Gallatin|memory manager" "the peer|Gallatin"; do
  n=$(grep -n -m1 -- "${w%%|*}" README.md | cut -d: -f1)
  if [ -n "$n" ] && sed -n "$((n > 2 ? n - 2 : 1)),$((n + 2))p" README.md | tr '\n' ' ' | grep -q -- "${w#*|}"; then
    ok "README: '${w%%|*}' says what it is at its first mention"
  else bad "README: '${w%%|*}' at line ${n:-?} without a word of what it is"; fi
done
[ $fails -eq 0 ] && echo "check_doc_words: all passed" || { echo "check_doc_words: $fails failed"; exit 1; }
