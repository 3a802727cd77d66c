#!/usr/bin/env python3
"""What a running daemon costs a host besides CPU: wake-ups and memory, read from /proc.

Watches every process whose executable is EXE (the floor prober, blackbox_exporter, reachd) while
another script drives it, and prints one RESULT line per process when it exits or this script is
stopped (SIGTERM/SIGINT, or --seconds):

  * wake-ups/s: context switches (voluntary + involuntary) of all its threads, summed over
    /proc/PID/task/*/status, per second of the time it was watched after a warm-up;
  * peak Private_Dirty (/proc/PID/smaps_rollup): memory that cannot be dropped or shared;
  * peak RSS (VmHWM) and its file-backed rest (RSS - anonymous).

  footprint.py --exe /path/to/reachd [--label reachd] [--warmup 5] [--seconds S]
  footprint.py --pid PID --seconds 30            # one process, one window
"""
import argparse
import os
import signal
import sys
import time


def ctx_switches(pid):
    """Context switches per thread: {tid: voluntary + involuntary}."""
    counts = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                        counts[task] = counts.get(task, 0) + int(line.split()[1])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return counts


def kib(path, key):
    with open(path) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


class Watched:
    def __init__(self, pid):
        self.pid, self.start = pid, time.monotonic()
        self.first = None  # (time, switches) after warm-up
        self.last = None
        self.private_dirty = self.hwm = self.anon_at_hwm = self.rss = 0
        self.per_thread = {}
        self.switches = 0  # running sum over every thread seen, exited ones included

    def sample(self, warmup):
        t = time.monotonic()
        for tid, count in ctx_switches(self.pid).items():
            self.switches += count - self.per_thread.get(tid, 0)
            self.per_thread[tid] = count
        switches = self.switches
        if t - self.start >= warmup:
            if self.first is None:
                self.first = (t, switches)
            self.last = (t, switches)
        self.private_dirty = max(self.private_dirty, kib(f"/proc/{self.pid}/smaps_rollup", "Private_Dirty"))
        rss = kib(f"/proc/{self.pid}/status", "VmRSS")
        if rss >= self.rss:
            self.rss = rss
            self.anon_at_hwm = kib(f"/proc/{self.pid}/status", "RssAnon")
        self.hwm = kib(f"/proc/{self.pid}/status", "VmHWM")

    def report(self, label):
        if not self.first or not self.last or self.last[0] <= self.first[0]:
            return
        window = self.last[0] - self.first[0]
        wakeups = (self.last[1] - self.first[1]) / window
        print(f"RESULT footprint {label} pid={self.pid}: wake-ups {wakeups:.2f}/s over {window:.0f} s, "
              f"peak Private_Dirty {self.private_dirty / 1024:.1f} MiB, peak RSS {self.hwm / 1024:.1f} MiB "
              f"(file-backed {max(0, self.rss - self.anon_at_hwm) / 1024:.1f} MiB)", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--exe")
    ap.add_argument("--pid", type=int)
    ap.add_argument("--label")
    ap.add_argument("--warmup", type=float, default=5.0)
    ap.add_argument("--seconds", type=float, default=3600.0, help="stop watching after this long")
    ap.add_argument("--every", type=float, default=0.5)
    args = ap.parse_args()
    label = args.label or os.path.basename(args.exe or str(args.pid))
    exe = os.path.realpath(args.exe) if args.exe else None
    watched = {}
    stop = []
    signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
    signal.signal(signal.SIGINT, lambda *a: stop.append(1))
    deadline = time.monotonic() + args.seconds
    while not stop and time.monotonic() < deadline:
        pids = [args.pid] if args.pid else [int(p) for p in os.listdir("/proc") if p.isdigit()]
        alive = set()
        for pid in pids:
            try:
                if exe and os.path.realpath(f"/proc/{pid}/exe") != exe:
                    continue
                watched.setdefault(pid, Watched(pid)).sample(args.warmup)
                alive.add(pid)
            except (FileNotFoundError, ProcessLookupError, PermissionError):
                pass
        for pid in [p for p in watched if p not in alive]:
            watched.pop(pid).report(label)
        if args.pid and not alive:
            break
        time.sleep(args.every)
    for w in watched.values():
        w.report(label)


if __name__ == "__main__":
    main()
