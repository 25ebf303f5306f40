#!/usr/bin/env bash
# check_inspect.sh — devmalloc-inspect on the generated fixtures: expected
# verdicts, and a non-zero exit on unreadable, foreign or corrupt input.
#   check_inspect.sh INSPECT FIXTURE_DIR
set -u
ins=$1 fx=$2 fails=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
expect() {  # expect RC PATTERN ARGS...
  local rc=$1 pat=$2; shift 2
  out=$("$ins" "$@" 2>&1); got=$?
  if [ "$got" -ne "$rc" ] || ! grep -qE -- "$pat" <<<"$out"; then
    echo "FAIL: devmalloc-inspect $*: rc $got (want $rc), pattern '$pat'"; echo "$out" | sed 's/^/  | /'
    fails=$((fails+1))
  fi
}
expect 0 're-link applies on devices of compute capability >= 9.0' "$fx/app_malloc"
expect 0 'PTX compute_90 .*zstd .*stock malloc: yes' "$fx/app_malloc"
expect 0 'an -rdc image; the shim re-links it from the relocatable code' "$fx/app_rdc"
expect 0 'sm_90: re-linked from relocatable code: 1 units \(1 as sm_90 SASS, 0 from PTX\)' "$fx/app_rdc"
expect 0 'sm_80: re-linked from relocatable code: 2 units \(2 as sm_80 SASS' "$fx/rdc_multi.so"
expect 0 'sm_100: re-linked from relocatable code: 2 units \(0 as sm_100 SASS, 2 from PTX\)' --arch 100 "$fx/rdc_multi.so"
expect 0 'sm_86: keeps stock malloc: 2 units have neither sm_86' --arch 86 "$fx/rdc_multi.so"
expect 0 '1 re-linkable from relocatable code' "$fx/rdc_cdp.so"
expect 0 'calls stock malloc but carries no PTX' "$fx/malloc_elf.fatbin"
expect 0 'section __nv_relfatbin' "$fx/app_rdc"
expect 0 'does not call device malloc' "$fx/app_plain_lib.so"
expect 0 'ELF sm_90 .*lz4 ' "$fx/malloc_lz4_all.fatbin"
expect 0 'devices >= sm_75' "$fx/malloc_multi.fatbin"
expect 0 'too new for sm_70' --arch sm_70 "$fx/malloc_ptx.fatbin"
expect 0 'devmalloc already linked in' "$fx/devmalloc_rdc.cubin"
expect 0 'no device code' /bin/sh
expect 1 'cannot read' "$tmp/missing"
printf 'plain text\001' >"$tmp/junk"; expect 1 'not an ELF' "$tmp/junk"
head -c 300 "$fx/malloc_default.fatbin" >"$tmp/trunc.fatbin"; expect 1 'truncated' "$tmp/trunc.fatbin"
cp "$fx/app_malloc" "$tmp/app"; chmod u+w "$tmp/app"
# zero the .nv_fatbin section's first entry header size: corrupt, exit 1
off=$((0x$(readelf -SW "$tmp/app" | sed "s/^ *\[ *[0-9]*\]//" | awk '$1==".nv_fatbin"{print $4}')))
printf '\000\000\000\000' | dd of="$tmp/app" bs=1 seek=$((off+16+4)) conv=notrunc 2>/dev/null
expect 1 'ERROR' "$tmp/app"
expect 2 'usage' --bogus
expect 2 "invalid --arch 'bogus'" --arch bogus "$fx/app_malloc"
expect 2 "invalid --arch 'sm_9000'" --arch sm_9000 "$fx/app_malloc"
expect 0 'too new for sm_70' --arch=compute_70 "$fx/malloc_ptx.fatbin"
expect 0 '^devmalloc-inspect [0-9]+\.[0-9]+' --version
expect 1 'Is a directory' "$tmp"
expect 1 'empty file' /dev/null
expect 1 'larger than .* not read further' /dev/zero
printf '// hello\nthis is .text, not PTX\n' >"$tmp/prose.txt"; expect 1 'not an ELF' "$tmp/prose.txt"
head -c 20000 "$fx/app_malloc" >"$tmp/trunc_app"; expect 1 'truncated ELF' "$tmp/trunc_app"
chmod 000 "$tmp/trunc_app"
[ "$(id -u)" -ne 0 ] && expect 1 'cannot read: Permission denied' "$tmp/trunc_app"
[ $fails -eq 0 ] && echo "check_inspect: all passed" || { echo "check_inspect: $fails failed"; exit 1; }
