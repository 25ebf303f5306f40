#!/usr/bin/env python3
"""plot_pool.py OUTDIR — plots of bench/pool_bench's CSV files.

Writes OUTDIR/pool_sizes.png (allocate+free latency vs size) and
OUTDIR/pool_live.png (latency vs number of live segments), p50 solid and
p99 dashed, one colour per allocator, and prints a markdown table of the
p50 pair latency for docs/benchmarks.md. The tables are printed first; the
plots need python3-matplotlib (tools/setup-deps.sh installs it) and are
skipped with a note when it is missing or fails.
"""
import csv
import os
import sys

ORDER = ["cudaMalloc", "async", "pool", "pool_nosync"]


def load(path, key):
    rows = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            if not r["p50_ns"]:
                continue
            rows.setdefault((r["allocator"], r["op"]), []).append(
                (int(r[key]), float(r["p50_ns"]), float(r["p99_ns"])))
    return rows


def human(n):
    for unit, s in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= s:
            return f"{n // s} {unit}"
    return f"{n} B"


def plot(rows, op, xlabel, title, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 5))
    for i, a in enumerate(ORDER):
        pts = sorted(rows.get((a, op), []))
        if not pts:
            continue
        x = [p[0] for p in pts]
        c = f"C{i}"
        ax.plot(x, [p[1] / 1000 for p in pts], "-o", color=c, label=f"{a} p50")
        ax.plot(x, [p[2] / 1000 for p in pts], "--", color=c, alpha=0.6, label=f"{a} p99")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("latency (µs)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print("wrote", out)


def table(rows, key_name, fmt):
    keys = sorted({k for (a, op), pts in rows.items() if op == "pair" for k, _, _ in pts})
    print(f"\n| {key_name} | " + " | ".join(f"{a} p50 / p99 (µs)" for a in ORDER) + " |")
    print("|---" * (len(ORDER) + 1) + "|")
    for k in keys:
        cells = []
        for a in ORDER:
            v = [p for p in rows.get((a, "pair"), []) if p[0] == k]
            cells.append(f"{v[0][1] / 1000:.2f} / {v[0][2] / 1000:.2f}" if v else "—")
        print(f"| {fmt(k)} | " + " | ".join(cells) + " |")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    sizes = load(os.path.join(d, "pool_sizes.csv"), "size")
    live = load(os.path.join(d, "pool_live.csv"), "live")
    table(sizes, "size", human)
    table(live, "live segments", str)
    try:
        plot(sizes, "pair", "allocation size (bytes)", "allocate + free latency vs size",
             os.path.join(d, "pool_sizes.png"))
        plot(live, "pair", "live segments", "allocate + free latency vs live segments (1..10 B)",
             os.path.join(d, "pool_live.png"))
    except Exception as e:  # no matplotlib, no fonts, ...: the tables stand
        print(f"plots: skipped ({type(e).__name__}: {e}); install python3-matplotlib "
              "(tools/setup-deps.sh)")


if __name__ == "__main__":
    main()
