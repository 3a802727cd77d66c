#!/usr/bin/env python3
"""Ratios of reachd's probe cost to the floor prober's and blackbox_exporter's, from the JSON files
Harness/probe_cost.py wrote (--json-out) in one run, rounds interleaved.

  probe-cost-ratios.py DIR      # DIR/ROUND-LABEL-N.json, LABEL in floor, blackbox, baseline, reachd

Prints, per N, the range over rounds of each one's CPU-s per 1,000 probes and peak RSS, and of
reachd's ratio to each peer within the same round. A `baseline` (another reachd, measured in the
same rounds: run-probe-benchmarks' BASELINE) is a peer too, and its own ratios to the floor and
blackbox_exporter are printed beside reachd's.
"""
import glob
import json
import os
import sys
from collections import defaultdict

runs = defaultdict(dict)  # (round, n) -> label -> result
for path in glob.glob(os.path.join(sys.argv[1], "*.json")):
    round_, label, _ = os.path.basename(path)[:-5].split("-")
    for result in json.load(open(path)):
        # Schedstat is summed over the threads alive at each end of the window: a thread that
        # exits inside it takes its CPU along, which /proc/PID/stat's ticks keep.
        if result.get("cpu_s_ticks", 0) - result["cpu_s"] > 0.02 and result["probes"]:
            result["cpu_s_per_1k"] = result["cpu_s_ticks"] / result["probes"] * 1000
        runs[(round_, result["n"])][label] = result


def span(values):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    low, high = min(values), max(values)
    return f"{low:.3g}" if low == high else f"{low:.3g}–{high:.3g}"


for n in sorted({n for _, n in runs}):
    rounds = [r for (_, m), r in sorted(runs.items()) if m == n]
    line = [f"RESULT ratios N={n} over {len(rounds)} round(s):"]
    has_baseline = any("baseline" in r for r in rounds)
    labels = ["floor", "blackbox", "baseline", "reachd"] if has_baseline else ["floor", "blackbox", "reachd"]
    for label in labels:
        line.append(f"{label} {span([r.get(label, {}).get('cpu_s_per_1k') for r in rounds])} CPU-s/1k, "
                    f"peak RSS {span([r.get(label, {}).get('peak_rss_mib') for r in rounds])} MiB;")
    for measured in [label for label in ("baseline", "reachd") if label in labels]:
        for peer in [label for label in ("floor", "blackbox", "baseline") if label in labels and label != measured]:
            ratios = [r[measured]["cpu_s_per_1k"] / r[peer]["cpu_s_per_1k"] for r in rounds
                      if measured in r and peer in r and r[peer].get("cpu_s_per_1k") and r[measured].get("cpu_s_per_1k")]
            line.append(f"{measured} ÷ {peer} {span(ratios)}×;")
    print(" ".join(line))
