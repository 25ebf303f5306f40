#!/usr/bin/env bash
# first-hour.sh — a new user's first hour, run from the README as printed: in
# a scratch clone, the set-up and test commands, the GPU goals, the relink
# recipe's commands (install, nvcc with pkg-config, by hand, -dlto), the
# CMake snippet (copied out of README.md exactly as printed, configured and
# built against the install), `devmalloc inspect` and `devmalloc run` on the
# result, and `make uninstall`. Each step prints one line: ok, FAIL or skip
# with the reason; the last line counts them.
#
#   tools/first-hour.sh [--repo DIR|URL] [--work DIR] [--tree DIR] [--no-gpu]
#     --repo   what to clone (default: this checkout)
#     --work   scratch directory (default: a new one under $TMPDIR, removed)
#     --tree   instead of a clone, a copy of DIR's files as they are (tracked
#              and untracked, not ignored) with DIR's build/, and no `make
#              check` (DIR's is the one running: make check passes this)
#     --no-gpu do not run the GPU steps where there is a GPU (where there is
#              none they run: each must say so in one line and exit 2)
# The README's install prefix line (PREFIX=/usr/local) is taken with the
# scratch prefix instead, `sudo` dropped, and $PREFIX/bin and its pkgconfig
# put on PATH and PKG_CONFIG_PATH as the README says for another prefix.
# Exit: 0 when no step failed.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
repo=$here work="" tree="" gpu=1
while [ $# -gt 0 ]; do
  case $1 in
    --repo|--work|--tree) [ $# -ge 2 ] || { echo "first-hour: $1 needs a value" >&2; exit 2; }
                          v=$2; set -- "$1=$v" "${@:3}"; continue ;;
    --repo=*) repo=${1#*=} ;;
    --work=*) work=${1#*=} ;;
    --tree=*) tree=$(cd "${1#*=}" && pwd) ;;
    --no-gpu) gpu=0 ;;
    -h|--help) sed -n '2,/^# Exit/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "first-hour: unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
  shift
done
# as from a user's shell, also when make check runs this
unset MAKEFLAGS MFLAGS MAKELEVEL
if [ -z "$work" ]; then work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; fi
mkdir -p "$work"
n_ok=0 n_skip=0 n_fail=0 log=$work/step.log
ok() { echo "ok    $1"; n_ok=$((n_ok + 1)); }
skip() { echo "skip  $1"; n_skip=$((n_skip + 1)); }
fail() { echo "FAIL  $1"; sed 's/^/      | /' "$log" | tail -15; n_fail=$((n_fail + 1)); }
# step NAME CMD...: run CMD in the current directory, its output in $log
step() { local name=$1; shift; if "$@" >"$log" 2>&1; then ok "$name"; else fail "$name"; fi; }
# readme_block LANG PATTERN: the first fenced block of that language in
# README.md holding a line that matches PATTERN, as printed
readme_block() {
  awk -v lang="$1" -v pat="$2" '
    /^```/ { if (in_) { in_ = 0; if (hit) { printf "%s", b; exit } next }
             if ($0 == "```" lang) { in_ = 1; b = ""; hit = 0 } next }
    in_ { b = b $0 "\n"; if ($0 ~ pat) hit = 1 }' "$clone/README.md"
}

# 1. the clone
clone=$work/devmalloc
if [ -n "$tree" ]; then
  mkdir -p "$clone" && (cd "$tree" && git ls-files -co --exclude-standard -z | xargs -0 tar -cf - ) |
    tar -C "$clone" -xf - && ok "copy of $tree (tracked and untracked files)" ||
    { fail "copy of $tree"; exit 1; }
elif git clone -q "$repo" "$clone" >"$log" 2>&1; then ok "git clone $repo"
else fail "git clone $repo"; exit 1; fi
cd "$clone" || exit 1
export PATH="$PATH:/usr/local/cuda/bin"
command -v nvcc >/dev/null || { echo "FAIL  nvcc not found: install the CUDA toolkit"; exit 1; }

# 2. set up and test
if [ -n "$tree" ]; then
  # DIR's build, newer than the copy's sources: make sees it up to date. The
  # make check that runs this may be writing under it (logs, fuzz corpora):
  # files that change or vanish while they are copied are taken as they are
  # or left out, and the copy is judged by the products the recipes use.
  (cd "$tree" && tar -cf - --exclude=build/logs --ignore-failed-read --warning=no-file-changed \
      --warning=no-file-removed --warning=no-file-shrank build 2>/dev/null) | tar -xf -
  if [ -f build/libdevmalloc_preload.so ] && [ -f build/libdevmalloc_device.a ] && [ -x build/devmalloc ] &&
     find build -exec touch -d "@$(date +%s)" {} +; then
    skip "make check: $tree's own is running (its build is used here)"
  else fail "copy of $tree/build"; fi
else
  step "make check" make check
fi
has_gpu=0; bash tools/need-gpu.sh first-hour 2>/dev/null && has_gpu=1
for goal in "make gpu-check" "make bench BENCH_ARGS=--quick"; do
  if [ $has_gpu -eq 0 ]; then
    out=$($goal 2>&1); rc=$?
    if [ $rc -eq 2 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && grep -q "needs a GPU" <<<"$out"; then
      skip "$goal: no GPU here (it says so in one line, exit 2, as the README says)"
    else echo "$out" >"$log"; fail "$goal without a GPU: exit $rc, not one line"; fi
  elif [ $gpu -eq 0 ]; then skip "$goal: --no-gpu"
  else step "$goal" $goal; fi
done

# 3. Recipe 1, as printed: install, the relink commands
prefix=$work/prefix
cp tests/relink/app.cu app.cu
recipe=$(readme_block sh 'make install')
if ! grep -q '^PREFIX=/usr/local' <<<"$recipe"; then
  echo "no PREFIX=/usr/local line in the recipe" >"$log"; fail "README recipe 1 sets PREFIX before it uses it"
fi
while IFS= read -r line; do
  cmd=${line%%#*}
  [ -n "${cmd// /}" ] || continue
  cmd=${cmd%"${cmd##*[! ]}"}
  case $cmd in
    PREFIX=/usr/local*)
      export PREFIX=$prefix PATH="$prefix/bin:$PATH" PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
      ok "$cmd (here: PREFIX=$prefix)"; continue ;;
  esac
  cmd=${cmd//sudo /}
  step "$cmd" bash -c "$cmd"
done <<<"$recipe"
for f in app a.out; do   # the by-hand link's program, the -dlto one's
  out=$(devmalloc inspect "./$f" 2>&1)
  grep -q "devmalloc already linked in" <<<"$out" && ok "devmalloc inspect ./$f: devmalloc linked in" ||
    { echo "$out" >"$log"; fail "devmalloc inspect ./$f"; }
done

# 4. the CMake snippet, exactly as printed, against the install
if command -v cmake >/dev/null 2>&1; then
  mkdir -p "$work/cmake-app" && readme_block cmake find_package >"$work/cmake-app/CMakeLists.txt" &&
    cp app.cu "$work/cmake-app/"
  step "README's CMake snippet: configure" cmake -S "$work/cmake-app" -B "$work/cmake-app/build" \
    -DCMAKE_PREFIX_PATH="$prefix"
  step "README's CMake snippet: build" cmake --build "$work/cmake-app/build"
  out=$(devmalloc inspect "$work/cmake-app/build/app" 2>&1)
  grep -q "devmalloc already linked in" <<<"$out" && ok "devmalloc inspect of the CMake build: devmalloc linked in" ||
    { echo "$out" >"$log"; fail "devmalloc inspect of the CMake build"; }
else
  skip "README's CMake snippet: cmake not installed (optional; tools/setup-deps.sh installs it)"
fi

# 5. Recipe 2 on the program
if [ $has_gpu -eq 1 ] && [ $gpu -eq 1 ]; then step "devmalloc run --stats -- ./app" devmalloc run --stats -- ./app
else skip "devmalloc run --stats -- ./app: needs a GPU"; fi
step "devmalloc run --shim /nonexistent -- ./app fails" bash -c '! devmalloc run --shim /nonexistent -- ./app'

# 6. uninstall
step "make uninstall PREFIX=\$PREFIX" make uninstall PREFIX="$prefix"
[ ! -e "$prefix" ] && ok "make uninstall: nothing left under \$PREFIX" ||
  { find "$prefix" >"$log"; fail "make uninstall left files or directories"; }

echo "first hour: $n_ok ok, $n_skip skipped, $n_fail failed"
[ $n_fail -eq 0 ]
