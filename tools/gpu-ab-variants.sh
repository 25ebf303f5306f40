#!/usr/bin/env bash
# tools/gpu-ab-variants.sh DIR... — the benchmark's devmalloc side for several
# builds in one process order, on a GPU machine: each DIR/ab_devmalloc (e.g.
# the build before a change and after it) runs the size, mixed and divergent
# workloads VARIANT_ROUNDS times (alternating builds, so that drift of the
# card's clocks falls on all of them), and the best Mop/s of each row per
# build is printed as a table (rows: workload size kernel; columns: DIRs).
# A run past VARIANT_TIMEOUT seconds (default 120) is stopped and its rows
# so far kept (a build under test may hang).
#   VARIANT_ARGS="--sizes 16,64,256,1K,4K,16K --reps 5"  VARIANT_ROUNDS=2  VARIANT_TIMEOUT=120
set -u
OUT=${OUT:-$(mktemp -d)}
rounds=${VARIANT_ROUNDS:-2}
for r in $(seq "$rounds"); do
  for d in "$@"; do
    n=$(basename "$d")
    # shellcheck disable=SC2086
    timeout "${VARIANT_TIMEOUT:-120}" "$d/ab_devmalloc" --workloads sizes,mixed,divergent ${VARIANT_ARGS:---sizes 16,64,256,1K,4K,16K --reps 5} \
      2>>"$OUT/variants.err" | sed "s/^/$n,$r,/" >>"$OUT/variants.csv"
  done
done
python3 - "$OUT/variants.csv" "$@" <<'PY'
import csv, sys, os
names = [os.path.basename(d.rstrip("/")) for d in sys.argv[2:]]
best = {}
for r in csv.reader(open(sys.argv[1])):
    if len(r) < 10: continue
    try: mops = float(r[8])
    except ValueError: continue
    key = (r[3], r[4], r[6]); best.setdefault(key, {})
    best[key][r[0]] = max(best[key].get(r[0], 0), mops)
print("%-28s" % "row" + "".join("%12s" % n for n in names) + "   ratios to " + names[0])
for key, v in best.items():
    base = v.get(names[0], 0)
    print("%-28s" % " ".join(key) + "".join("%12.0f" % v.get(n, 0) for n in names) + "   " +
          " ".join("%.2f" % (v.get(n, 0) / base if base else 0) for n in names[1:]))
PY
