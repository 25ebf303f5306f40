#!/usr/bin/env python3
"""bench/report.py — merge stock.csv and devmalloc.csv of one A/B run into
summary.csv, plots (PNG, when matplotlib is there) and a table printed last."""
import csv, os, sys

out = sys.argv[1]
gpu = sys.argv[2] if len(sys.argv) > 2 else ""

def load(v):
    rows = {}
    with open(os.path.join(out, v + ".csv")) as f:
        for r in csv.DictReader(f):
            rows[(r["workload"], r["size"], r["kernel"])] = r
    return rows

stock, dm = load("stock"), load("devmalloc")
keys = [k for k in dm if k in stock]

def fmt_size(s):
    s = int(s)
    if s == 0: return "mixed"
    for u, d in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if s >= d and s % d == 0: return f"{s // d} {u}"
    return f"{s} B"

summary = []
for k in keys:
    s, d = stock[k], dm[k]
    ms_s, ms_d = float(s["ms"]), float(d["ms"])
    mo_s, mo_d = float(s["mops"]), float(d["mops"])
    ratio = (mo_d / mo_s) if mo_s > 0 else float("inf")
    summary.append(dict(workload=k[0], size=k[1], kernel=k[2], threads_stock=s["threads"],
                        threads_devmalloc=d["threads"], mops_stock=mo_s, mops_devmalloc=mo_d,
                        ratio=ratio, ms_stock=ms_s, ms_devmalloc=ms_d,
                        failures_stock=s["failures"], failures_devmalloc=d["failures"],
                        note_stock=s["note"], note_devmalloc=d["note"]))
with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(summary[0].keys()) if summary else ["empty"])
    w.writeheader()
    for r in summary: w.writerow(r)

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    for ax, kern in zip(axes, ("alloc", "free", "pair")):
        for var, rows, style in (("stock", stock, "o--"), ("devmalloc", dm, "s-")):
            pts = sorted((int(k[1]), float(r["mops"])) for k, r in rows.items()
                         if k[0] == "sizes" and k[2] == kern and float(r["mops"]) > 0)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=var)
        ax.set_xscale("log", base=2); ax.set_yscale("log")
        ax.set_xlabel("allocation size (bytes)"); ax.set_ylabel("Mop/s")
        ax.set_title(f"{kern}: throughput vs size"); ax.grid(True, which="both", alpha=.3); ax.legend()
    fig.suptitle(gpu); fig.tight_layout()
    fig.savefig(os.path.join(out, "throughput_vs_size.png"), dpi=110)
    util = {}
    for var, rows in (("stock", stock), ("devmalloc", dm)):
        for k, r in rows.items():
            if k[0] == "util":
                util.setdefault(fmt_size(k[1]), {})[var] = float(r["note"].split()[1].rstrip("%"))
    if util:
        fig, ax = plt.subplots(figsize=(9, 4))
        labels = list(util.keys()); x = range(len(labels))
        ax.bar([i - .2 for i in x], [util[l].get("stock", 0) for l in labels], .4, label="stock")
        ax.bar([i + .2 for i in x], [util[l].get("devmalloc", 0) for l in labels], .4, label="devmalloc")
        ax.set_xticks(list(x)); ax.set_xticklabels(labels); ax.set_ylabel("utilization at exhaustion (%)")
        ax.set_title("bytes granted / heap bytes, 256 MiB heap, one size until NULL"); ax.legend()
        fig.tight_layout(); fig.savefig(os.path.join(out, "utilization.png"), dpi=110)
    print(f"plots: {out}/throughput_vs_size.png {out}/utilization.png")
except Exception as e:  # no matplotlib, no fonts, ...: the table below stands
    print(f"plots: skipped ({type(e).__name__}: {e}); install python3-matplotlib (tools/setup-deps.sh)")

print(f"\nA/B benchmark on {gpu or 'unknown GPU'} (Mop/s; ratio = devmalloc / stock; median of repetitions;")
print("threads a/b: stock ran a threads, devmalloc b, where stock's kernel would have passed the time cap)")
print(f"{'workload':<10} {'size':>8} {'kernel':<18} {'threads':>8} {'stock':>10} {'devmalloc':>11} {'ratio':>9}  notes")
for r in summary:
    note = "; ".join(x for x in (r["note_stock"] and "stock: " + r["note_stock"],
                                 r["note_devmalloc"] and "devmalloc: " + r["note_devmalloc"]) if x)
    if r["workload"] == "util":
        print(f"{'util':<10} {fmt_size(r['size']):>8} {'fill-until-NULL':<18} {r['threads_devmalloc']:>8} "
              f"{r['note_stock'].split()[1]:>10} {r['note_devmalloc'].split()[1]:>11} {'':>9}  utilization")
        continue
    if r["workload"] == "init":
        print(f"{'init':<10} {fmt_size(r['size']):>8} {r['kernel']:<18} {'':>8} {r['ms_stock']:>8.2f}ms "
              f"{r['ms_devmalloc']:>9.2f}ms {'':>9}  time")
        continue
    ratio = f"{r['ratio']:.1f}x" if r["ratio"] != float("inf") else "inf"
    thr = r["threads_devmalloc"]
    if r["threads_stock"] != thr:  # stock ran fewer threads (its time cap): say so
        thr = f"{r['threads_stock']}/{thr}"
    print(f"{r['workload']:<10} {fmt_size(r['size']):>8} {r['kernel']:<18} {thr:>8} "
          f"{r['mops_stock']:>10.2f} {r['mops_devmalloc']:>11.2f} {ratio:>9}  {note}")

# ---- the reference (bench/reference_h200.csv): devmalloc / peer, targets met or missed
REF = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference_h200.csv")
PEER_SIZES = {16, 64, 256, 1024, 4096, 16384}  # rows where devmalloc must be >= 1.0x the peer

def load_reference(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))

def reference_rows(ref, dm_rows):
    """(label, devmalloc now, peer, ratio, target, verdict) for each reference row found."""
    out = []
    for r in ref:
        key = (r["workload"], r["size"], r["kernel"])
        if key not in dm_rows or not r["peer"]:
            continue
        d = dm_rows[key]
        if r["workload"] == "util":
            now = float(d["note"].split()[1].rstrip("%"))
            target, ok = ">= 90%", now >= 90.0
        else:
            now = float(d["mops"])
            size = int(r["size"])
            if r["workload"] in ("mixed", "divergent") or size in PEER_SIZES:
                target, ok = ">= 1.0x peer", now >= float(r["peer"])
            else:
                target, ok = "(peer reference only)", None
        peer = float(r["peer"])
        out.append((f"{r['workload']} {fmt_size(r['size'])} {r['kernel']}", now, peer,
                    now / peer if peer > 0 else float("inf"), target,
                    "met" if ok else ("missed" if ok is not None else "-")))
    return out

if "H200" in gpu:
    rows = reference_rows(load_reference(REF), dm)
    print(f"\nAgainst the reference (Gallatin @1aa70ad, H200, independent harness, 2026-11-23):")
    print(f"{'row':<28} {'devmalloc':>10} {'peer':>10} {'dm/peer':>8}  {'target':<22} verdict")
    for label, now, peer, ratio, target, verdict in rows:
        print(f"{label:<28} {now:>10.2f} {peer:>10.2f} {ratio:>7.2f}x  {target:<22} {verdict}")
    missed = sum(1 for r in rows if r[5] == "missed")
    print(f"targets: {sum(1 for r in rows if r[5] == 'met')} met, {missed} missed")
else:
    print(f"\nThe reference figures (bench/reference_h200.csv) were taken on an H200; this GPU is "
          f"{gpu or 'unknown'}, so they do not apply: compare the ratios to stock above.")
for r in summary:  # no row below 10x stock at any size (alloc, free, pair)
    if r["workload"] == "sizes" and r["ratio"] < 10:
        print(f"below 10x stock: {fmt_size(r['size'])} {r['kernel']} ({r['ratio']:.1f}x)")
