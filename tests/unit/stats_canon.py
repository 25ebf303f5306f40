#!/usr/bin/env python3
"""stats_canon.py FORMAT FILE — parse devmalloc stats/trace records (JSON
lines or CSV, docs/stats.md) and print each as sorted "key=value" lines,
"--" after each record, so a test can compare both forms and check values.
Exit 1 with a message when a record does not parse."""
import csv
import json
import sys


def flat(rec):
    out = {}
    for k, v in rec.items():
        if k == "classes":
            for i, c in enumerate(v):
                out["class%d_size" % i] = c["size"]
                out["class%d_allocs" % i] = c["allocs"]
        else:
            out[k] = "null" if v is None else v
    return out


def main():
    fmt, path = sys.argv[1], sys.argv[2]
    with open(path, newline="") as f:
        if fmt == "json":
            recs = []
            for n, line in enumerate(f, 1):
                try:
                    recs.append(flat(json.loads(line)))
                except (ValueError, KeyError, TypeError) as e:
                    sys.exit("%s:%d: not a record: %s" % (path, n, e))
        else:
            recs = list(csv.DictReader(f))
    for r in recs:
        for k in sorted(r):
            print("%s=%s" % (k, r[k]))
        print("--")


main()
