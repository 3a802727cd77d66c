#!/usr/bin/env python3
"""How long 1 Hz pollers take to notice that a healthy target failed, and that it came back.

One target_server.py (beside this file) is watched by every observer at once. Then, --reps times
for each failure kind: wait a random 1-2 s (a random phase against the poll ticks), switch the
target to the kind, wait until every observer has seen the failure, wait a random 0-1 s, switch it
back to healthy, and wait until every observer has seen it healthy again. The switch instant is the
CLOCK_MONOTONIC time the target server stamps on the switch; an observer's detection time is when
its first failed check after the switch completed, its recovery time when its first healthy check
*started* after the switch back completed.

Kinds: stopped (connections refused) and blackhole (accepted, never answered).
Observers:
  blackbox  prometheus-blackbox-exporter's /probe (http_2xx, timeout --timeout) called on a fixed
            1 Hz schedule, each call on its own thread so calls may overlap as independent scrapes
            do; failed when probe_success is not 1.
  direct    a reference poller here: GET the target at 1 Hz with --timeout; failed unless 200.
  external  a daemon started from --external-cmd (placeholders {target_url}, {targets_file},
            {free_port}, {tmpdir}), its state read by GETting --scrape-url every --scrape-period
            (50 ms, so up to 50 ms of granularity); failed while --down-regex matches the body.

Theory at 1 Hz with a 2 s timeout: refused U(0,1) s + ~1 ms; blackhole U(0,1) s + 2 s.

  detection.py [--observers blackbox,direct] [--kinds stopped,blackhole] [--reps 20] [--json-out FILE]
"""
import argparse
import concurrent.futures
import json
import os
import random
import re
import shlex
import sys
import tempfile
import threading
import time
from urllib.parse import quote, urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402


class Observer:
    """Runs check() every `period` seconds on a pool thread (a check that hangs never delays the
    next tick) and keeps (started, finished, healthy) for each."""

    def __init__(self, name, period, check):
        self.name, self.period, self.check = name, period, check
        self.results, self.lock = [], threading.Lock()
        self.stopping = threading.Event()
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=8)
        self.ticker = threading.Thread(target=self.tick, daemon=True)

    def run_check(self):
        started = time.monotonic()
        try:
            healthy = bool(self.check())
        except Exception:  # any failure to answer is a failed check
            healthy = False
        with self.lock:
            self.results.append((started, time.monotonic(), healthy))

    def tick(self):
        due = time.monotonic()
        while not self.stopping.is_set():
            self.pool.submit(self.run_check)
            due += self.period
            self.stopping.wait(max(0.0, due - time.monotonic()))

    def first(self, healthy, finished_after, started_after=None):
        with self.lock:
            found = [r for r in self.results if r[2] == healthy and r[1] >= finished_after
                     and (started_after is None or r[0] >= started_after)]
        return min(found, key=lambda r: r[1]) if found else None

    def stop(self):
        self.stopping.set()
        self.ticker.join(2)
        self.pool.shutdown(wait=True, cancel_futures=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--observers", default="blackbox,direct")
    ap.add_argument("--kinds", default="stopped,blackhole")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--timeout", type=float, default=2.0)
    ap.add_argument("--external-cmd")
    ap.add_argument("--scrape-url", help="e.g. http://127.0.0.1:{free_port}/metrics")
    ap.add_argument("--down-regex", help="e.g. 'reachd_connected 0'")
    ap.add_argument("--scrape-period", type=float, default=0.05)
    ap.add_argument("--json-out")
    ap.add_argument("--max-total", type=float, default=1500.0)
    args = ap.parse_args()
    names = [x for x in args.observers.split(",") if x]
    kinds = [x for x in args.kinds.split(",") if x]
    unknown = set(names) - {"blackbox", "direct", "external"}
    if unknown:
        raise SystemExit(f"unknown observer(s): {', '.join(sorted(unknown))}")
    if "external" in names and not (args.external_cmd and args.scrape_url and args.down_regex):
        raise SystemExit("the external observer needs --external-cmd, --scrape-url and --down-regex")
    if "blackbox" in names:
        harness.require_blackbox()
    harness.bounded(args.max_total)
    processes, observers = [], []
    with tempfile.TemporaryDirectory(prefix="detection.") as tmp:
        target = harness.TargetServer(tmp, max_seconds=args.max_total + 60)
        try:
            path = "/api/v1/health"
            target_url = target.url()
            for name in names:
                if name == "direct":
                    observers.append(Observer("direct", args.interval,
                                              lambda: harness.http_get(target.port, path, args.timeout)[0] == 200))
                elif name == "blackbox":
                    blackbox, port = harness.start_blackbox(tmp, f"{args.timeout:g}s")
                    processes.append(blackbox)
                    probe = "/probe?target=%s&module=http_2xx" % quote(target_url, safe="")

                    def check_blackbox(port=port, probe=probe):
                        status, body = harness.http_get(port, probe, args.timeout + 3)
                        success = re.search(rb"^probe_success (\S+)", body, re.M)
                        return status == 200 and success is not None and float(success.group(1)) == 1.0
                    observers.append(Observer("blackbox", args.interval, check_blackbox))
                else:
                    port = harness.free_port()
                    targets_file = os.path.join(tmp, "targets.txt")
                    with open(targets_file, "w") as f:
                        f.write(target_url + "\n")
                    command = args.external_cmd.format(target_url=target_url, targets_file=targets_file, free_port=port, tmpdir=tmp)
                    daemon = harness.spawn(shlex.split(command), os.path.join(tmp, "external.log"))
                    processes.append(daemon)
                    scrape = urlsplit(args.scrape_url.format(free_port=port))
                    scrape_path = scrape.path + ("?" + scrape.query if scrape.query else "")
                    harness.wait_ready(scrape.port, scrape_path, daemon, 30)
                    down = re.compile(args.down_regex.encode())

                    def check_external(port=scrape.port, scrape_path=scrape_path, down=down):
                        status, body = harness.http_get(port, scrape_path, 1.0)
                        return status == 200 and down.search(body) is None
                    observers.append(Observer("external", args.scrape_period, check_external))

            def wait_all(healthy, after, limit, started_after=None):
                deadline = time.monotonic() + limit
                while time.monotonic() < deadline:
                    if all(o.first(healthy, after, started_after) for o in observers):
                        return
                    time.sleep(0.01)

            for observer in observers:
                observer.ticker.start()
            back = target.switch("healthy")
            wait_all(True, back, 15, started_after=back)
            if not all(o.first(True, back, back) for o in observers):
                raise SystemExit("not every observer saw the healthy target within 15 s")
            settle = 3 * args.interval + 3 * args.timeout
            rows = []
            for kind in kinds:
                for rep in range(args.reps):
                    time.sleep(1.0 + random.random() * args.interval)
                    switched = target.switch(kind)
                    wait_all(False, switched, settle)
                    failed = {o.name: o.first(False, switched) for o in observers}
                    time.sleep(random.random() * args.interval)
                    back = target.switch("healthy")
                    wait_all(True, back, settle, started_after=back)
                    row = {"kind": kind, "rep": rep}
                    for o in observers:
                        seen, recovered = failed[o.name], o.first(True, back, back)
                        row[o.name + "_detect_s"] = round(seen[1] - switched, 4) if seen else None
                        row[o.name + "_first_fail_started_s"] = round(seen[0] - switched, 4) if seen else None
                        row[o.name + "_recover_s"] = round(recovered[1] - back, 4) if recovered else None
                    rows.append(row)
                    print(json.dumps(row), flush=True)
                    if kind == "blackhole":
                        time.sleep(args.timeout)  # the hanging probes end before the next switch
            summary = {}
            for kind in kinds:
                for o in observers:
                    detected = [r[o.name + "_detect_s"] for r in rows if r["kind"] == kind and r[o.name + "_detect_s"] is not None]
                    recovered = [r[o.name + "_recover_s"] for r in rows if r["kind"] == kind and r[o.name + "_recover_s"] is not None]
                    summary[f"{o.name}/{kind}"] = {
                        "n": len(detected), "missed": sum(1 for r in rows if r["kind"] == kind) - len(detected),
                        "median_s": harness.percentile(detected, 50), "p90_s": harness.percentile(detected, 90),
                        "p99_s": harness.percentile(detected, 99), "min_s": min(detected, default=None),
                        "max_s": max(detected, default=None), "recover_median_s": harness.percentile(recovered, 50)}
            for key, value in summary.items():
                print(key, json.dumps(value))
            if args.json_out:
                with open(args.json_out, "w") as f:
                    json.dump({"rows": rows, "summary": summary}, f, indent=1)
            print(f"RESULT detection ({args.interval:g} s poll, {args.timeout:g} s timeout, reps={args.reps}): " + "; ".join(
                f"{key} median {v['median_s']} s (min {v['min_s']}, max {v['max_s']}"
                + (f", missed {v['missed']}" if v["missed"] else "") + ")" for key, v in summary.items()), flush=True)
            return 0
        finally:
            for o in observers:
                o.stopping.set()
            for process in reversed(processes):
                harness.stop(process)
            target.stop()
            for o in observers:
                o.stop()


if __name__ == "__main__":
    sys.exit(harness.main_guard(main))
