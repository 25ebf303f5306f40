#!/usr/bin/env python3
"""devmalloc report — summarize a heap trace (DEVMALLOC_TRACE) and plot it.

    devmalloc report [-o PREFIX] [--no-plot] TRACE

Prints, per context: samples, time span, final and peak counters, the kernels
seen; writes PREFIX-timeline.png (bytes in use, footprint and mapped bytes
over time, failures, kernel names at the launches sampled) and
PREFIX-classes.png (allocations per size class and failures). PREFIX defaults
to TRACE without its extension. The format is docs/stats.md. A file that is
not a devmalloc trace is refused with one line naming the file, the line and
why, and exit status 1.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys

REQUIRED = ("t", "event", "context", "status", "counters", "heap_bytes", "mapped_bytes",
            "bytes_in_use", "footprint_bytes", "peak_bytes", "allocs", "frees", "failures",
            "classes")


class TraceError(Exception):
    pass


def load(path):
    """(header, samples); raises TraceError with "PATH:LINE: why"."""
    try:
        f = open(path, "rb")
    except OSError as e:
        raise TraceError("%s: cannot read: %s" % (path, e.strerror))
    header, samples = None, []
    with f:
        for n, raw in enumerate(f, 1):
            where = "%s:%d" % (path, n)
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise TraceError("%s: not text" % where)
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except ValueError as e:
                raise TraceError("%s: not JSON (%s)" % (where, e))
            if not isinstance(rec, dict):
                raise TraceError("%s: not a JSON object" % where)
            kind = rec.get("record")
            if header is None:
                if kind != "trace":
                    raise TraceError("%s: not a devmalloc trace (the first line must be "
                                     "the {\"record\":\"trace\",...} header)" % where)
                if rec.get("version") != 1:
                    raise TraceError("%s: trace version %r, this tool reads version 1"
                                     % (where, rec.get("version")))
                header = rec
                continue
            if kind != "sample":
                raise TraceError("%s: unknown record %r" % (where, kind))
            missing = [k for k in REQUIRED if k not in rec]
            if missing:
                raise TraceError("%s: sample lacks %s" % (where, ", ".join(missing)))
            bad = [k for k in REQUIRED[5:-1] if not isinstance(rec[k], int)]
            if not isinstance(rec["t"], (int, float)) or bad or not isinstance(rec["classes"], list) \
                    or not all(isinstance(c, dict) for c in rec["classes"]):
                raise TraceError("%s: malformed sample (t must be a number, %s integers, "
                                 "classes a list of objects)" % (where, ", ".join(bad) or "counters"))
            samples.append(rec)
    if header is None:
        raise TraceError("%s: empty file: not a devmalloc trace" % path)
    if not samples:
        raise TraceError("%s: no samples (the process created no devmalloc heap)" % path)
    return header, samples


def demangle(names):
    """Map mangled kernel names to readable ones (c++filt when present)."""
    names = sorted(n for n in names if n)
    if not names or not shutil.which("c++filt"):
        return {n: n for n in names}
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True,
                             text=True, timeout=10).stdout.split("\n")
    except (OSError, subprocess.SubprocessError):
        return {n: n for n in names}
    return {n: (out[i] if i < len(out) and out[i] else n) for i, n in enumerate(names)}


def short(name, width=40):
    base = name.split("(")[0]
    return base if len(base) <= width else base[:width - 3] + "..."


def mib(b):
    return b / 1048576.0


def by_context(samples):
    ctxs = {}
    for s in samples:
        ctxs.setdefault(s["context"], []).append(s)
    return ctxs


def summary(path, header, samples, names):
    print("devmalloc trace %s: pid %s, sampling bound %s ms, %d samples"
          % (path, header.get("pid", "?"), header.get("interval_ms", "?"), len(samples)))
    for ctx, ss in sorted(by_context(samples).items()):
        last = ss[-1]
        kernels = sorted({names.get(s["kernel"], s["kernel"]) for s in ss if s.get("kernel")})
        print("context %s (device %s): %d samples over %.3f s, last: %s (%s)"
              % (ctx, last.get("device", "?"), len(ss), ss[-1]["t"] - ss[0]["t"],
                 last["status"], last["event"]))
        print("  heap %.1f MiB, mapped %.1f MiB, growth events %d"
              % (mib(last["heap_bytes"]), mib(last["mapped_bytes"]), last.get("growth_events", 0)))
        print("  allocations %d, frees %d, failures %d, large blocks %d"
              % (last["allocs"], last["frees"], last["failures"], last.get("large_allocs", 0)))
        print("  bytes in use: last %.3f MiB, max sampled %.3f MiB; footprint: last %.3f MiB, "
              "peak %.3f MiB" % (mib(last["bytes_in_use"]), mib(max(s["bytes_in_use"] for s in ss)),
                                 mib(last["footprint_bytes"]), mib(last["peak_bytes"])))
        if last["status"] == "context_lost":
            print("  the context was lost (device fault): counters are the last known")
        if kernels:
            print("  kernels: %s" % ", ".join(short(k, 60) for k in kernels))


def plot(prefix, samples, names):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise TraceError("python3-matplotlib is missing: install it (tools/setup-deps.sh) "
                         "or use --no-plot")
    ctxs = by_context(samples)
    fig, (ax, axf) = plt.subplots(2, 1, figsize=(11, 7), sharex=True,
                                  gridspec_kw={"height_ratios": [3, 1]})
    for ctx, ss in sorted(ctxs.items()):
        t = [s["t"] for s in ss]
        tag = " (ctx %s)" % ctx if len(ctxs) > 1 else ""
        ax.plot(t, [mib(s["bytes_in_use"]) for s in ss], label="bytes in use" + tag)
        ax.plot(t, [mib(s["footprint_bytes"]) for s in ss], label="footprint" + tag)
        ax.step(t, [mib(s["mapped_bytes"]) for s in ss], where="post", linestyle="--",
                label="mapped" + tag)
        axf.step(t, [s["failures"] for s in ss], where="post", label="failures (NULL)" + tag)
        labelled, prev = 0, None
        for s in ss:          # a label where the last kernel launched changes
            k = s.get("kernel")
            if k and k != prev and labelled < 24:
                ax.axvline(s["t"], color="0.85", linewidth=0.8, zorder=0)
                ax.annotate(short(names.get(k, k), 28), (s["t"], 0.98),
                            xycoords=("data", "axes fraction"), rotation=90, fontsize=7,
                            va="top", ha="right", color="0.35")
                labelled += 1
            prev = k or prev
    ax.set_ylabel("MiB")
    ax.set_title("devmalloc heap over time")
    ax.legend(loc="upper right", fontsize=8)
    ax.grid(alpha=0.3)
    axf.set_xlabel("seconds since the trace began")
    axf.set_ylabel("failures")
    axf.grid(alpha=0.3)
    fig.tight_layout()
    timeline = prefix + "-timeline.png"
    fig.savefig(timeline, dpi=110)
    plt.close(fig)

    sizes, allocs, failures = [], {}, 0
    for ctx, ss in ctxs.items():
        last = ss[-1]
        failures += last["failures"]
        for c in last["classes"]:
            if c.get("size"):
                allocs[c["size"]] = allocs.get(c["size"], 0) + c.get("allocs", 0)
        allocs["large"] = allocs.get("large", 0) + last.get("large_allocs", 0)
    sizes = sorted(k for k in allocs if k != "large") + ["large"]
    labels = [("%d B" % s if s < 1024 else "%d KiB" % (s // 1024)) if s != "large" else "large"
              for s in sizes]
    fig, ax = plt.subplots(figsize=(11, 4.5))
    ax.bar(labels, [allocs[s] for s in sizes], color="#2e7d32", label="allocations")
    ax.bar(["failures"], [failures], color="#c62828", label="failures (all sizes)")
    ax.set_yscale("symlog")
    ax.set_ylabel("count (log)")
    ax.set_title("devmalloc allocations per size class (end of trace)")
    ax.tick_params(axis="x", labelrotation=60, labelsize=8)
    ax.legend(fontsize=8)
    fig.tight_layout()
    classes = prefix + "-classes.png"
    fig.savefig(classes, dpi=110)
    plt.close(fig)
    return [timeline, classes]


def main(argv):
    ap = argparse.ArgumentParser(prog="devmalloc report",
                                 description="Summarize and plot a devmalloc heap trace.")
    ap.add_argument("trace")
    ap.add_argument("-o", "--out", metavar="PREFIX",
                    help="write PREFIX-timeline.png and PREFIX-classes.png "
                         "(default: TRACE without its extension)")
    ap.add_argument("--no-plot", action="store_true", help="print the summary only")
    a = ap.parse_args(argv)
    try:
        header, samples = load(a.trace)
        names = demangle({s.get("kernel") for s in samples})
        summary(a.trace, header, samples, names)
        if not a.no_plot:
            prefix = a.out or os.path.splitext(a.trace)[0]
            for p in plot(prefix, samples, names):
                print("wrote %s" % p)
    except TraceError as e:
        print("devmalloc report: %s" % e, file=sys.stderr)
        return 1
    except OSError as e:
        print("devmalloc report: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)   # `devmalloc report T | head` ends quietly
    sys.exit(main(sys.argv[1:]))
