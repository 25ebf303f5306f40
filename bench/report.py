#!/usr/bin/env python3
"""bench/report.py — merge stock.csv and devmalloc.csv of one A/B run into
summary.csv, plots (PNG, when matplotlib is there) and a table printed last;
then the targets: against the reference (an H200 only; a size row, and mixed
utilization, is judged on the lower of this run's figure and that of one
process per size or a fresh heap, fresh.csv, where the phase ran), and those measured by their own phases
(smallheap.csv, firstpass.csv, shim.csv and shiminit.csv, the start in
processes of its own; "not run" where a file is missing)."""
import csv, os, statistics, sys

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
failed = os.path.join(out, "stock.failed")  # bench/run.sh: the phases where ab_stock failed
where = ", ".join(open(failed).read().split("\n")[:-1]) if os.path.exists(failed) else ""
no_stock = [k for k in dm if k not in stock]
if where or no_stock:
    head = f"stock's ab_bench failed in the {where} (CUDA's own allocator); " if where else ""
    print(f"\n{head}{len(no_stock)} devmalloc rows have no stock figure (not judged against stock):")
    for k in no_stock:
        d = dm[k]
        fig = d["note"] if k[0] == "util" else (f"{float(d['mops']):.2f}" if d.get("mops") else "-")
        print(f"{k[0]:<10} {fmt_size(k[1]):>8} {k[2]:<18} {d['threads']:>8} {'-':>10} {fig:>11}")

# ---- the reference (bench/reference_h200.csv): devmalloc / peer, targets met or missed
REF = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference_h200.csv")
PEER_SIZES = {16, 64, 256, 1024, 4096, 16384}  # rows where devmalloc must be >= 1.0x the peer

def load_reference(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))

def util_pct(r):
    return float(r["note"].split()[1].rstrip("%"))

def load_optional(name):
    """a phase's CSV keyed as devmalloc.csv's (fresh.csv: one process per size, as the
    reference's harness runs them; firstpass.csv: its second pass has a reference
    figure too); {} when the phase did not run"""
    return load(name) if os.path.exists(os.path.join(out, name + ".csv")) else {}

def reference_rows(ref, dm_rows, fresh):
    """(label, devmalloc now, peer, ratio, target, verdict, note) for each reference row
    found; a size row with a figure of its own process too is judged on the lower one"""
    out = []
    for r in ref:
        key = (r["workload"], r["size"], r["kernel"])
        if key not in dm_rows or not r["peer"]:
            continue
        d = dm_rows[key]
        note = ""
        if r["workload"] == "util":
            now = util_pct(d)
            target, ok = ">= 90%", now >= 90.0
        else:
            now = float(d["mops"])
            if key in fresh:
                own = float(fresh[key]["mops"])
                note = f"  (lower of one process per size {own:.2f}, this run {now:.2f})"
                now = min(now, own)
            size = int(r["size"])
            if r["workload"] in ("mixed", "divergent", "firstpass") or size in PEER_SIZES:
                target, ok = ">= 1.0x peer", now >= float(r["peer"])
            else:
                target, ok = "(peer reference only)", None
        peer = float(r["peer"])
        out.append((f"{r['workload']} {fmt_size(r['size'])} {r['kernel']}", now, peer,
                    now / peer if peer > 0 else float("inf"), target,
                    "met" if ok else ("missed" if ok is not None else "-"), note))
    # no peer figure: the target alone, judged on the lower of the main run's
    # figure (after the power-of-four fills) and a fresh heap's, where measured
    mixed = dm_rows.get(("util", "0", "fill-until-NULL"))
    now = util_pct(mixed) if mixed else None
    own = fresh.get(("util", "0", "fill-until-NULL"))
    note = ""
    if now is not None and own:
        note = f"  (lower of a fresh heap {util_pct(own):.1f}%, after the other fills {now:.1f}%)"
        now = min(now, util_pct(own))
    out.append(("util mixed fill-until-NULL", now, None, None, ">= 85%",
                "not run" if now is None else ("met" if now >= 85.0 else "missed"), note))
    return out

def num(x, width, unit=""):
    return f"{x:>{width - len(unit)}.2f}{unit}" if x is not None else f"{'-':>{width}}"

if "H200" in gpu:
    rows = reference_rows(load_reference(REF), {**dm, **load_optional("firstpass")},
                          load_optional("fresh"))
    print(f"\nAgainst the reference (Gallatin @1aa70ad, H200, independent harness, eager loading, 2026-11-28):")
    print(f"{'row':<28} {'devmalloc':>10} {'peer':>10} {'dm/peer':>8}  {'target':<22} verdict")
    for label, now, peer, ratio, target, verdict, note in rows:
        print(f"{label:<28} {num(now, 10)} {num(peer, 10)} {num(ratio, 8, 'x')}  {target:<22} {verdict}{note}")
    count = lambda v: sum(1 for r in rows if r[5] == v)
    print(f"targets: {count('met')} met, {count('missed')} missed"
          + (f", {count('not run')} not run" if count("not run") else ""))
else:
    print(f"\nThe reference figures (bench/reference_h200.csv) were taken on an H200; this GPU is "
          f"{gpu or 'unknown'}, so they do not apply: compare the ratios to stock above.")
for r in summary:  # no row below 10x stock at any size (alloc, free, pair)
    if r["workload"] == "sizes" and r["ratio"] < 10:
        print(f"below 10x stock: {fmt_size(r['size'])} {r['kernel']} ({r['ratio']:.1f}x)")

# ---- targets measured by their own phases (bench/run.sh): devmalloc against
# itself, so on any GPU. Each phase's CSV may be missing (--quick, a run cut
# short, --workloads without "targets"): its targets then say "not run".
verdicts = []

def verdict(ok):
    v = "not run" if ok is None else ("met" if ok else "missed")
    verdicts.append(v)
    return v

def not_run(what, name):
    print(f"{what}: {verdict(None)} (no {name}.csv: a run cut short, --quick, or --workloads without 'targets')")

def asked(r):
    """the thread count a row was asked for (the time cap may have reduced it)"""
    n = r["note"]
    return n.split()[-1] if n.startswith("threads reduced from") else r["threads"]

def load_phase(name):
    """rows of DIR/name.csv keyed by (variant, workload, size, asked threads, kernel); None: not run"""
    path = os.path.join(out, name + ".csv")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return {(r["variant"], r["workload"], r["size"], asked(r), r["kernel"]): r for r in csv.DictReader(f)}

def section(what, name, *title):
    """print a section's title; its phase's rows, or None after a "not run" line"""
    print("\n" + "\n".join(title))
    rows = load_phase(name)
    if rows is None:
        not_run(what, name)
    return rows

def ns_per_call(r):
    return float(r["ms"]) * 1e6 / int(r["threads"])

def start_totals():
    """shiminit.csv: each process's start (heap set-up + first malloc kernel, ms) by variant; {} when absent"""
    path = os.path.join(out, "shiminit.csv")
    if not os.path.exists(path):
        return {}
    setup, totals = {}, {}
    with open(path) as f:
        for r in csv.DictReader(f):
            if r["workload"] != "init":
                continue
            v = r["variant"]
            if r["kernel"] == "heap-setup":
                setup[v] = float(r["ms"])
            elif r["kernel"] == "first-malloc-kernel" and v in setup:
                totals.setdefault(v, []).append(setup.pop(v) + float(r["ms"]))
    return totals

SMALL, LARGE, SMALL_STOCK = "devmalloc@64M", "devmalloc@4G", "stock@64M"
sh = section("small heap", "smallheap",
             "Small heap: devmalloc in a 64 MiB heap vs the same kernels and threads in a 4 GiB heap",
             "(Mop/s; target: >= 0.5x the 4 GiB figure for every workload that fits in 64 MiB)")
if sh is not None:
    print(f"{'size':>8} {'kernel':<6} {'threads':>8} {'4 GiB':>10} {'64 MiB':>10} {'64M/4G':>7} {'stock 64M':>10}  verdict")
    groups = sorted({(int(k[2]), int(k[3])) for k in sh if k[0] == SMALL and k[1] == "sizes"})
    if not groups:
        print(f"small heap: {verdict(None)} (no {SMALL} rows in smallheap.csv: the phase failed)")
    for size, thr in groups:
        get = lambda v, kern: sh.get((v, "sizes", str(size), str(thr), kern))
        fails = sum(int(r["failures"]) for r in (get(SMALL, k) for k in ("alloc", "pair")) if r)
        if fails:
            print(f"{fmt_size(size):>8} {'':<6} {thr:>8}  does not fit in 64 MiB ({fails} failed requests): not judged")
            continue
        for kern in ("alloc", "free", "pair"):
            r, big, st = get(SMALL, kern), get(LARGE, kern), get(SMALL_STOCK, kern)
            mo = lambda x: float(x["mops"]) if x else None
            ratio = mo(r) / mo(big) if r and big and mo(big) > 0 else None
            v = verdict(None if ratio is None else ratio >= 0.5)
            print(f"{fmt_size(size):>8} {kern:<6} {thr:>8} {num(mo(big), 10)} {num(mo(r), 10)} "
                  f"{num(ratio, 7, 'x')} {num(mo(st), 10)}  {v}")

FAIL_SIZE = 65536
if section("failing requests", "smallheap",
           f"Failing requests: 64 MiB heap, {fmt_size(FAIL_SIZE)} alloc kernels (ns per call = kernel time / threads;",
           "target: the kernel whose requests fail is no slower per call than one whose requests succeed)") is not None:
    al = [r for k, r in sh.items() if k[0] == SMALL and k[1] == "sizes" and k[2] == str(FAIL_SIZE) and k[4] == "alloc"]
    thr = lambda r: int(r["threads"])
    failing = max((r for r in al if int(r["failures"]) > thr(r) // 2), key=thr, default=None)
    ok = max((r for r in al if int(r["failures"]) == 0), key=thr, default=None)
    for what, r in (("failing", failing), ("succeeding", ok)):
        if r:
            print(f"  {what:<10} {thr(r):>8} threads, {r['failures']:>8} failed: {ns_per_call(r):8.2f} ns/call")
    same = failing and sh.get((LARGE, "sizes", str(FAIL_SIZE), asked(failing), "alloc"))
    if same and int(same["failures"]) == 0:
        print(f"  (the failing kernel's {thr(same)} threads in the 4 GiB heap, all succeeding: "
              f"{ns_per_call(same):.2f} ns/call; not judged)")
    if failing and ok:
        q = ns_per_call(failing) / ns_per_call(ok)
        print(f"failing requests: {verdict(q <= 1.0)} (failing / succeeding per call {q:.2f}x)")
    else:
        print(f"failing requests: {verdict(None)} (no {'failing' if not failing else 'succeeding'} "
              f"{fmt_size(FAIL_SIZE)} alloc row in the 64 MiB heap)")

fp = section("first pass", "firstpass",
             "First pass: the first alloc kernel on a fresh heap vs the median of the passes after it",
             "(ms; target: first <= 2x steady)")
if fp is not None:
    print(f"{'size':>8} {'threads':>8} {'first':>10} {'steady':>10} {'first/steady':>13}  verdict")
    firsts = [(k, r) for k, r in fp.items() if k[4] == "alloc-first"]
    if not firsts:
        print(f"first pass: {verdict(None)} (no alloc-first rows in firstpass.csv: the phase failed)")
    for k, r in firsts:
        st = fp.get(k[:4] + ("alloc-steady",))
        first, steady = float(r["ms"]), (float(st["ms"]) if st else 0.0)
        q = first / steady if steady > 0 else None
        v = verdict(None if q is None else q <= 2.0)
        print(f"{fmt_size(k[2]):>8} {r['threads']:>8} {num(first, 10)} {num(steady if q else None, 10)} "
              f"{num(q, 13, 'x')}  {v}")

sm = section("shim", "shim",
             "Shim: the unmodified stock binary under LD_PRELOAD vs the same source relinked, same rows",
             "(Mop/s; init: heap set-up + first malloc kernel, ms; target: >= 0.9x the relinked throughput,",
             "init time <= 1.1x the relinked; shim/peer: the shim against the reference, on an H200, not judged:",
             "the reference's harness ran devmalloc so)")
if sm is not None:
    rel = {(k[1], k[2], k[4]): r for k, r in sm.items() if k[0] == "relinked"}
    shim = {(k[1], k[2], k[4]): r for k, r in sm.items() if k[0] == "shim"}
    print(f"{'row':<34} {'relinked':>10} {'shim':>10} {'shim/rel':>9}  verdict {'shim/peer':>9}")
    peer = {(r["workload"], r["size"], r["kernel"]): float(r["peer"])
            for r in load_reference(REF) if r["peer"]} if "H200" in gpu else {}
    init = lambda d: [r for k, r in d.items() if k[0] == "init"]
    for kern in ("heap-setup", "first-malloc-kernel"):
        a, b = (next((float(r["ms"]) for r in init(d) if r["kernel"] == kern), None) for d in (rel, shim))
        print(f"{'init ' + kern:<34} {num(a, 10, 'ms')} {num(b, 10, 'ms')} {'':>9}  (in the total below)")
    a, b = (sum(float(r["ms"]) for r in init(d)) if len(init(d)) == 2 else None for d in (rel, shim))
    starts = start_totals()
    if starts:  # the start in processes of its own: judged by the fastest of each
        print(f"{'init total (time, this process)':<34} {num(a, 10, 'ms')} {num(b, 10, 'ms')} "
              f"{num(b / a if a and b is not None else None, 9, 'x')}  (not judged: one process each)")
        n = min(len(starts.get("relinked", [])), len(starts.get("shim", [])))
        a, b = (statistics.median(starts[v][:n]) if n else None for v in ("relinked", "shim"))
        print(f"{f'init total (median of {n} starts)':<34} {num(a, 10, 'ms')} {num(b, 10, 'ms')} "
              f"{num(b / a if a and b is not None else None, 9, 'x')}  (not judged: a start's time is bimodal)")
        a, b = (min(starts[v][:n]) if n else None for v in ("relinked", "shim"))
        label = f"init total (fastest of {n} starts)"
    else:
        label = "init total (time)"
    q = b / a if a and b is not None else None
    print(f"{label:<34} {num(a, 10, 'ms')} {num(b, 10, 'ms')} {num(q, 9, 'x')}  "
          f"{verdict(None if q is None else q <= 1.1)}")
    for k, r in rel.items():
        if k[0] == "init":
            continue
        s_ = shim.get(k)
        q = float(s_["mops"]) / float(r["mops"]) if s_ and float(r["mops"]) > 0 else None
        p_ = peer.get(k)
        sp = float(s_["mops"]) / p_ if s_ and p_ else None
        v = verdict(None if q is None else q >= 0.9)
        print(f"{k[0] + ' ' + fmt_size(k[1]) + ' ' + k[2]:<34} {float(r['mops']):>10.2f} "
              f"{num(float(s_['mops']) if s_ else None, 10)} {num(q, 9, 'x')}  {v:<7} {num(sp, 9, 'x')}")

# ---- start-up under the shim (startup.csv): a cold cache against the
# driver's own JIT of the same PTX, a warm one against the relinked build.
print("\nStart-up: process wall time, ms (median of the runs: 5 cold and stock-jit, 10 the others);")
print("cold: empty cache under the shim; warm: its cache; stock-jit: stock with CUDA_FORCE_PTX_JIT=1")
print("(the driver compiles the application's PTX). A start varies by tens of ms from run to run, so the")
print("targets compare the fastest run of each way: the cold run's compile (fastest cold less fastest warm)")
print("at most 1.2x the driver's (fastest stock-jit less fastest stock); warm-rel (fastest warm less")
print("fastest relinked) at most 5 ms")
sp = os.path.join(out, "startup.csv")
if not os.path.exists(sp):
    print(f"start-up: {verdict(None)} (no startup.csv: a run cut short, --quick, or no shim)")
else:
    st = {}
    with open(sp) as f:
        for r in csv.DictReader(f):
            if r["us"]:
                st.setdefault((r["program"], r["way"]), []).append(int(r["us"]) / 1000.0)
    med = lambda p, w: statistics.median(st[(p, w)]) if (p, w) in st else None
    best = lambda p, w: min(st[(p, w)]) if (p, w) in st else None
    less = lambda a, b: None if None in (a, b) else a - b
    print(f"{'program':<12} {'cold':>8} {'warm':>8} {'stock-jit':>9} {'stock':>8} {'relinked':>8} "
          f"{'compile':>8} {'driver':>8} {'warm-rel':>8}  verdicts")
    for p in sorted({k[0] for k in st}):
        cold, warm, jit, plain, rel = (med(p, w) for w in ("cold", "warm", "stock-jit", "stock", "relinked"))
        ours, drivers = less(best(p, "cold"), best(p, "warm")), less(best(p, "stock-jit"), best(p, "stock"))
        gap = less(best(p, "warm"), best(p, "relinked"))
        ok_cold = None if None in (ours, drivers) else ours <= 1.2 * max(drivers, 0.0)
        ok_warm = None if gap is None else gap <= 5.0
        print(f"{p:<12} {num(cold, 8)} {num(warm, 8)} {num(jit, 9)} {num(plain, 8)} {num(rel, 8)} "
              f"{num(ours, 8)} {num(drivers, 8)} {num(gap, 8)}  cold {verdict(ok_cold)}, warm {verdict(ok_warm)}")

# ---- the limit (limit.csv): the same kernels over a per-warp bump
# allocator and a no-op free; devmalloc / limit beside devmalloc / peer.
lim = load_optional("limit")
print("\nThe limit: a per-warp bump allocator (one atomic a warp, no reuse) and a no-op free, same kernels")
if not lim:
    print("limit: not run (no limit.csv)")
else:
    ref = {(r["workload"], r["size"], r["kernel"]): r for r in load_reference(REF)} if "H200" in gpu else {}
    print(f"{'row':<18} {'devmalloc':>10} {'limit':>10} {'dm/limit':>9} {'peer':>10} {'dm/peer':>8}")
    for (w, s, k), r in lim.items():
        d = dm.get(("sizes", s, k))
        p = ref.get(("sizes", s, k))
        now, cap = (float(d["mops"]) if d else None), float(r["mops"])
        peer = float(p["peer"]) if p and p["peer"] else None
        print(f"{fmt_size(s) + ' ' + k:<18} {num(now, 10)} {cap:>10.2f} "
              f"{num(now / cap if now is not None and cap > 0 else None, 9, 'x')} {num(peer, 10)} "
              f"{num(now / peer if now is not None and peer else None, 8, 'x')}")

# ---- an empty heap (fresh.csv, one process per size): each size's first
# kernel meets the empty heap; with live bytes at most half the heap (every
# row of the phase: --threads capped so), no kernel may get NULL.
empty = []
fr = load_phase("fresh")
print("\nEmpty heap: one process per size, its first kernel and the timed ones")
print("(first: Mop/s and NULLs of the process's first kernel; alloc/pair: NULLs of the timed kernels;")
print(" target: 0 NULL in every kernel while live bytes <= half the heap)")
if fr is None or not any(k[4] == "first" for k in fr):
    print(f"empty heap: not run (no first rows in fresh.csv: a run cut short, --quick, or an older build)")
else:
    print(f"{'size':>8} {'threads':>8} {'first Mop/s':>12} {'first NULL':>11} {'alloc NULL':>11} {'pair NULL':>10}  verdict")
    for k, r in fr.items():
        if k[1] != "sizes" or k[4] != "first":
            continue
        timed = {kk[4]: rr for kk, rr in fr.items() if kk[:3] == k[:3] and kk[4] in ("alloc", "pair")}
        nulls = [int(r["failures"])] + [int(x["failures"]) for x in timed.values()]
        ok = all(n == 0 for n in nulls)
        empty.append("met" if ok else "missed")
        get = lambda kern: timed[kern]["failures"] if kern in timed else "-"
        print(f"{fmt_size(k[2]):>8} {r['threads']:>8} {float(r['mops']):>12.2f} {r['failures']:>11} "
              f"{get('alloc'):>11} {get('pair'):>10}  {'met' if ok else 'missed'}")
    print(f"empty heap: {empty.count('met')} met, {empty.count('missed')} missed")

print(f"\nsmall heap, failing requests, first pass, shim, start-up: {verdicts.count('met')} met, "
      f"{verdicts.count('missed')} missed, {verdicts.count('not run')} not run")
