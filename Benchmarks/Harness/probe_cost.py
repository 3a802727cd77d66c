#!/usr/bin/env python3
"""What it costs a poller to probe N healthy HTTP targets once a second each.

Every run starts a fresh target_server.py (beside this file) with N target URLs on it
(http://127.0.0.1:PORT/api/v1/health?id=I) and one poller, lets it warm up, then measures a window:

  * CPU seconds of the poller per 1,000 probes: on-CPU time summed over its threads
    (/proc/PID/task/*/schedstat, nanoseconds). When its set of threads changed inside the window (a
    thread that exits takes its schedstat along), utime+stime from /proc/PID/stat (10 ms ticks),
    which keeps the time of threads that exited. Both are reported (cpu_s, cpu_s_ticks).
  * peak RSS (VmHWM) and mean RSS over the window; the rig's own CPU (target server, driver).

Pollers:
  blackbox (default)  prometheus-blackbox-exporter (module http_2xx, timeout 2 s). It probes only
                      when asked, so an asyncio driver here calls its /probe at exactly 1 Hz per
                      target, spread evenly over each second, on keep-alive connections (one per
                      target up to --conns), as Prometheus would. Probes = answered /probe calls.
  --external-cmd CMD  any daemon that polls by itself (reachd, the floor prober). CMD is split like
                      a shell line (no shell runs: the PID measured is the daemon's) after these
                      placeholders are filled: {targets_file} (one URL a line), {n}, {target_port},
                      {free_port}, {tmpdir}. Probes = requests the target server answered.

  probe_cost.py [--n 1,100,1000] [--duration 20] [--warmup 5] [--json-out FILE]
                [--external-cmd CMD --label NAME]

Prints one line per N and a RESULT line; --json-out writes a list with one object per N.
"""
import argparse
import asyncio
import json
import os
import re
import shlex
import sys
import tempfile
import time
from urllib.parse import quote

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

SUCCESS = re.compile(rb"^probe_success (\S+)", re.M)
DURATION = re.compile(rb"^probe_duration_seconds (\S+)", re.M)


async def blackbox_driver(port, paths, seconds, connections):
    """Asks blackbox for paths[i] once a second each, evenly spread, from `connections` keep-alive
    connections; returns (scheduled, sent, done, success or None, probe_duration_s) per call."""
    queue, records = asyncio.Queue(), []

    async def one(reader, writer, path):
        writer.write(b"GET " + path + b" HTTP/1.1\r\nHost: bench\r\n\r\n")
        head = await reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
        if length:
            body = await reader.readexactly(int(length.group(1)))
        else:  # chunked
            parts = []
            while True:
                size = int((await reader.readline()).split(b";")[0], 16)
                if size == 0:
                    await reader.readline()
                    break
                parts.append(await reader.readexactly(size))
                await reader.readexactly(2)
            body = b"".join(parts)
        return status, body

    async def worker():
        reader = writer = None
        while True:
            item = await queue.get()
            if item is None:
                break
            scheduled, path = item
            sent = time.monotonic()
            try:
                if writer is None:
                    reader, writer = await asyncio.open_connection(harness.HOST, port)
                status, body = await asyncio.wait_for(one(reader, writer, path), 10)
                success = SUCCESS.search(body)
                duration = DURATION.search(body)
                ok = int(float(success.group(1))) if status == 200 and success else None
                seconds_taken = float(duration.group(1)) if duration else None
            except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ValueError, IndexError):
                if writer is not None:
                    writer.close()
                reader = writer = None
                ok, seconds_taken = None, None
            records.append((scheduled, sent, time.monotonic(), ok, seconds_taken))
        if writer is not None:
            writer.close()

    workers = [asyncio.ensure_future(worker()) for _ in range(connections)]
    start = time.monotonic() + 0.2
    n = len(paths)
    k = 0
    while True:
        second, i = divmod(k, n)
        at = start + second + i / n
        if at >= start + seconds:
            break
        delay = at - time.monotonic()
        if delay > 0.001:
            await asyncio.sleep(delay)
        queue.put_nowait((at, paths[i]))
        k += 1
    for _ in workers:
        queue.put_nowait(None)
    await asyncio.wait(workers, timeout=15)
    return records


def measure(n, args, tmp):
    target = harness.TargetServer(tmp, max_seconds=args.warmup + args.duration + 120)
    poller = None
    try:
        urls = [target.url(f"?id={i}") for i in range(n)]
        targets_file = os.path.join(tmp, "targets.txt")
        with open(targets_file, "w") as f:
            f.write("\n".join(urls) + "\n")
        if args.external_cmd:
            command = args.external_cmd.format(targets_file=targets_file, n=n, target_port=target.port,
                                               free_port=harness.free_port(), tmpdir=tmp)
            poller = harness.spawn(shlex.split(command), os.path.join(tmp, "poller.log"))
        else:
            poller, blackbox_port = harness.start_blackbox(tmp, args.timeout)
        marks, rss = {}, []

        def mark(name):
            marks[name] = {"t": time.monotonic(), "cpu": harness.cpu_ns(poller.pid), "ticks": harness.cpu_ticks(poller.pid),
                           "threads": harness.threads(poller.pid), "target_cpu": harness.cpu_ns(target.pid),
                           "driver_cpu": harness.cpu_ns(os.getpid()), "requests": target.stats()["requests"]}

        async def window(start):
            await asyncio.sleep(max(0.0, start + args.warmup - time.monotonic()))
            if poller.poll() is not None:
                raise SystemExit(f"the poller exited with {poller.returncode} during the warm-up; see {tmp}/poller.log")
            mark("begin")
            end = start + args.warmup + args.duration
            while time.monotonic() < end:
                rss.append(harness.status_kib(poller.pid, "VmRSS"))
                await asyncio.sleep(min(0.5, max(0.0, end - time.monotonic())))
            mark("end")

        async def run():
            start = time.monotonic() + 0.2
            if args.external_cmd:
                await window(start)
                return []
            paths = [("/probe?target=%s&module=http_2xx" % quote(url, safe="")).encode() for url in urls]
            sampler = asyncio.ensure_future(window(start))
            records = await blackbox_driver(blackbox_port, paths, args.warmup + args.duration, min(n, args.conns))
            await sampler
            return records

        records = asyncio.run(run())
        if poller.poll() is not None:
            raise SystemExit(f"the poller exited with {poller.returncode} during the window")
        peak = harness.status_kib(poller.pid, "VmHWM")
        begin, end = marks["begin"], marks["end"]
        seconds = end["t"] - begin["t"]
        cpu_s = (end["cpu"] - begin["cpu"]) / 1e9
        ticks_s = (end["ticks"] - begin["ticks"]) / harness.CLK_TCK
        if begin["threads"] != end["threads"]:
            cpu_s = ticks_s
        inside = [r for r in records if begin["t"] <= r[2] < end["t"]]
        probes = end["requests"] - begin["requests"] if args.external_cmd else len(inside)
        result = {
            "label": args.label, "n": n, "window_s": round(seconds, 2), "target_rate": n,
            "achieved_rate": round(probes / seconds, 2), "probes": probes,
            "ok": probes if args.external_cmd else sum(1 for r in inside if r[3] == 1),
            "target_requests": end["requests"] - begin["requests"],
            "cpu_s": round(cpu_s, 3), "cpu_s_ticks": round(ticks_s, 2),
            "cpu_s_per_1k": round(cpu_s / probes * 1000, 4) if probes else None,
            "cpu_pct_of_core": round(100 * cpu_s / seconds, 2),
            "peak_rss_mib": round(peak / 1024, 1),
            "avg_rss_mib": round(sum(rss) / len(rss) / 1024, 1) if rss else None,
            "target_cpu_s": round((end["target_cpu"] - begin["target_cpu"]) / 1e9, 2),
            "driver_cpu_s": round((end["driver_cpu"] - begin["driver_cpu"]) / 1e9, 2),
        }
        if not args.external_cmd:
            durations = [r[4] * 1000 for r in inside if r[3] == 1 and r[4] is not None]
            lags = [(r[1] - r[0]) * 1000 for r in inside]
            result.update({
                "errors": sum(1 for r in inside if r[3] is None), "failed": sum(1 for r in inside if r[3] == 0),
                "probe_ms_p50": harness.percentile(durations, 50), "probe_ms_p99": harness.percentile(durations, 99),
                "lag_ms_p99": round(harness.percentile(lags, 99) or 0, 2)})
        return result
    finally:
        harness.stop(poller)
        target.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", default="1,100,1000", help="comma-separated target counts, one run each")
    ap.add_argument("--duration", type=float, default=20.0, help="measured window per run, seconds")
    ap.add_argument("--warmup", type=float, default=5.0)
    ap.add_argument("--timeout", default="2s", help="blackbox's probe timeout")
    ap.add_argument("--conns", type=int, default=1000, help="most keep-alive driver connections to blackbox")
    ap.add_argument("--external-cmd")
    ap.add_argument("--label")
    ap.add_argument("--json-out")
    ap.add_argument("--max-total", type=float, default=1800.0, help="hard bound on the whole script, seconds")
    args = ap.parse_args()
    args.label = args.label or ("external" if args.external_cmd else "blackbox_exporter")
    if not args.external_cmd:
        harness.require_blackbox()
    harness.bounded(args.max_total)
    results = []
    for n in [int(x) for x in args.n.split(",") if x]:
        with tempfile.TemporaryDirectory(prefix="probe-cost.") as tmp:
            result = measure(n, args, tmp)
        results.append(result)
        print(args.label + " " + " ".join(f"{k}={v}" for k, v in result.items() if k != "label"), flush=True)
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(results, f, indent=1)
    print(f"RESULT cost {args.label}: " + "; ".join(
        f"n={r['n']}: {r['cpu_s_per_1k']} CPU-s/1k probes, peak RSS {r['peak_rss_mib']} MiB, rate {r['achieved_rate']}/s"
        for r in results), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(harness.main_guard(main))
