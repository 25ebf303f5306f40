#!/usr/bin/env bash
# check_report.sh — `devmalloc report` on a small trace file writes a summary
# and two non-empty PNG files; bad trace files are refused with one clear line
# and exit status 1, never a Python traceback. The fixture
# (tests/unit/fixtures/trace_churn.jsonl) is synthetic: written by hand in the
# shim's trace format (docs/stats.md) to look like a sizes + churn run, not
# recorded on a GPU.
#   check_report.sh [DEVMALLOC]     (default tools/devmalloc)
set -u
dm=${1:-tools/devmalloc}
fx=tests/unit/fixtures/trace_churn.jsonl
fails=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; fails=$((fails+1)); }

out=$("$dm" report -o "$tmp/churn" "$fx" 2>&1) || fail "report of the fixture: rc $?: $out"
for want in 'context 1 \(device 0\): 53 samples' 'allocations 45088768, frees 45088768, failures 3' \
            'kernels: .*k_alloc' 'kernels: .*k_churn' 'kernels: .*k_free' \
            'wrote .*churn-timeline.png' 'wrote .*churn-classes.png'; do
  grep -qE -- "$want" <<<"$out" || fail "summary lacks '$want'"
done
for p in timeline classes; do
  f=$tmp/churn-$p.png
  if [ ! -s "$f" ] || [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" != '211PNG' ]; then
    fail "$f is not a non-empty PNG"
  elif [ "$(stat -c %s "$f")" -lt 10000 ]; then
    fail "$f is suspiciously small ($(stat -c %s "$f") bytes)"
  fi
done

expect_bad() {  # expect_bad NAME PATTERN  (file $tmp/NAME)
  local err rc
  err=$("$dm" report -o "$tmp/bad" "$tmp/$1" 2>&1 >/dev/null); rc=$?
  if [ $rc -ne 1 ] || ! grep -qE -- "$2" <<<"$err" || grep -q Traceback <<<"$err"; then
    fail "bad trace $1: rc $rc (want 1), want '$2', got: $err"
  fi
}
: >"$tmp/empty";                                   expect_bad empty 'empty file'
echo 'hello' >"$tmp/text";                         expect_bad text 'text:1: not JSON'
printf '\377\376\000x\n' >"$tmp/binary";           expect_bad binary 'binary:1: not (text|JSON)'
echo '{"record":"stats","context":1}' >"$tmp/stats"; expect_bad stats 'not a devmalloc trace'
echo '[1,2]' >"$tmp/array";                        expect_bad array 'not a JSON object'
sed 's/"version":1/"version":7/' "$fx" >"$tmp/version"; expect_bad version 'version 7'
head -1 "$fx" >"$tmp/header";                      expect_bad header 'no samples'
sed '3s/"bytes_in_use":[0-9]*,//' "$fx" >"$tmp/lacks"; expect_bad lacks 'lacks:3: sample lacks bytes_in_use'
sed '4s/"allocs":[0-9]*/"allocs":"many"/' "$fx" >"$tmp/type"; expect_bad type 'type:4: malformed sample'
head -c 2000 "$fx" >"$tmp/cut";                    expect_bad cut "cut:$(($(wc -l <"$tmp/cut") + 1)): not JSON"
sed '5s/"record":"sample"/"record":"other"/' "$fx" >"$tmp/kind"; expect_bad kind "kind:5: unknown record 'other'"
expect_bad missing 'cannot read'

[ $fails -eq 0 ] && echo "check_report: all passed" || { echo "check_report: $fails failed"; exit 1; }
