#!/usr/bin/env bash
# format.sh [--check] [JOBS] — the C/CUDA sources (the ones git tracks; without
# git, those under the source folders) in the style of .clang-format.
#   format.sh          rewrite them in place
#   format.sh --check  list the ones clang-format would change; exit 1 if any
# CLANG_FORMAT names the program (default clang-format). Run from the
# repository root (make format and make format-check do).
set -u
check=0
[ "${1:-}" = --check ] && { check=1; shift; }
jobs=${1:-$(nproc 2>/dev/null || echo 2)}
cf=${CLANG_FORMAT:-clang-format}
if ! command -v "$cf" >/dev/null; then
  echo "format: $cf not found (tools/setup-deps.sh or apt-get install clang-format)"
  [ $check -eq 1 ] && { echo "format: check skipped"; exit 0; } # an optional package: the check skips
  exit 2
fi
exts=(c h cu cuh cpp)
list() {
  git ls-files "${exts[@]/#/*.}" 2>/dev/null && return
  local names=() e
  for e in "${exts[@]}"; do names+=(-name "*.$e" -o); done
  find bench device host include interpose tests tools \( "${names[@]}" -false \) -type f
}
files=$(list)
total=$(wc -l <<<"$files")
if [ $check -eq 0 ]; then
  xargs -r -P "$jobs" -n 16 "$cf" -i --style=file <<<"$files"
  echo "format: $total files formatted"
  exit
fi
export cf
bad=$(xargs -r -P "$jobs" -I{} sh -c '"$cf" --style=file "$1" | cmp -s "$1" - || echo "$1"' sh {} <<<"$files" | sort)
if [ -n "$bad" ]; then
  sed 's/^/not formatted: /' <<<"$bad"
  echo "format-check: $(wc -l <<<"$bad") of $total files not formatted (make format fixes them)"
  exit 1
fi
echo "format-check: $total files formatted"
