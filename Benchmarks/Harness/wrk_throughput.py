#!/usr/bin/env python3
"""Throughput of one HTTP endpoint on loopback under wrk, with the server's CPU per 1,000 requests,
its idle RSS and its peak RSS.

  wrk_throughput.py SUBJECT [REPS=3] [DURATION_S=10] [THREADS=2] [CONNECTIONS=50]

SUBJECT:
  blackbox              prometheus-blackbox-exporter, GET /metrics
  blackbox-probe        prometheus-blackbox-exporter, GET /probe of a healthy local target_server.py
  "cmd:ARGV@/path"      any server: ARGV is split on spaces (no shell, so the PID is the server's),
                        {port} in it is replaced by a free port; /path is the endpoint, e.g.
                        "cmd:.build/release/reachd --targets-file F --listen 127.0.0.1:{port}@/metrics"

The server is started fresh on 127.0.0.1, answers twice, and sits quiet for SETTLE (5) seconds
before its idle RSS is read. Then REPS runs of `wrk -tTHREADS -cCONNECTIONS -dDURATION_S --latency`;
around each, the server's on-CPU time summed over its threads (/proc/PID/task/*/schedstat). Prints a
line per run and one RESULT line with the medians.
"""
import os
import resource
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402


def median(values):
    values = sorted(values)
    return values[(len(values) - 1) // 2] if values else None


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) > 1 else 2
    subject = sys.argv[1]
    reps, seconds, threads, connections = (int(a) for a in (sys.argv[2:] + ["3", "10", "2", "50"][len(sys.argv) - 2:])[:4])
    settle = float(os.environ.get("SETTLE", "5"))
    wrk = harness.require("wrk", "wrk")
    harness.bounded(120 + settle + reps * (seconds + 10))
    with tempfile.TemporaryDirectory(prefix="wrk-throughput.") as tmp:
        port = harness.free_port()
        target = None
        if subject in ("blackbox", "blackbox-probe"):
            binary = harness.require_blackbox()
            with open(os.path.join(tmp, "blackbox.yml"), "w") as f:
                f.write(harness.BLACKBOX_CONFIG.format(timeout="2s"))
            argv = [binary, "--config.file=" + os.path.join(tmp, "blackbox.yml"), f"--web.listen-address=127.0.0.1:{port}"]
            path, name = "/metrics", "blackbox_exporter"
            if subject == "blackbox-probe":
                target = harness.TargetServer(tmp)
                path = f"/probe?target=http%3A%2F%2F127.0.0.1%3A{target.port}%2Fapi%2Fv1%2Fhealth&module=http_2xx"
                name = "blackbox_exporter(/probe)"
        elif subject.startswith("cmd:") and "@" in subject:
            command, path = subject[4:].rsplit("@", 1)
            argv = command.replace("{port}", str(port)).split()
            name = os.path.basename(argv[0])
        else:
            raise SystemExit(f"unknown subject {subject!r}: blackbox, blackbox-probe or \"cmd:ARGV {{port}}@/path\"")
        server = harness.spawn(argv, os.path.join(tmp, "server.log"))
        try:
            harness.wait_ready(port, path, server, 20)
            body = harness.http_get(port, path)[1]
            time.sleep(settle)
            idle_rss = harness.status_kib(server.pid, "VmRSS")
            url = f"http://127.0.0.1:{port}{path}"
            print(f"server: {' '.join(argv)}\npid={server.pid} url={url} body_bytes={len(body)} idle_rss_kib={idle_rss}", flush=True)
            rates, per_1k = [], []
            for rep in range(1, reps + 1):
                before_cpu = harness.cpu_ns(server.pid)
                before_children = resource.getrusage(resource.RUSAGE_CHILDREN)
                run = subprocess.run([wrk, f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency", url],
                                     capture_output=True, text=True, timeout=seconds + 60)
                after_cpu = harness.cpu_ns(server.pid)
                after_children = resource.getrusage(resource.RUSAGE_CHILDREN)
                out = run.stdout
                rate = re.search(r"^Requests/sec:\s+([\d.]+)", out, re.M)
                requests = re.search(r"^\s*(\d+) requests in", out, re.M)
                if not rate or not requests:
                    raise SystemExit(f"wrk printed no rate (exit {run.returncode}): {(run.stderr or out).strip()[:200]}")
                non_2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
                errors = re.search(r"Socket errors:\s*(.*)", out)
                p50 = re.search(r"^\s+50%\s+(\S+)", out, re.M)
                p99 = re.search(r"^\s+99%\s+(\S+)", out, re.M)
                server_cpu = (after_cpu - before_cpu) / 1e9
                wrk_cpu = (after_children.ru_utime + after_children.ru_stime) - (before_children.ru_utime + before_children.ru_stime)
                rates.append(float(rate.group(1)))
                per_1k.append(server_cpu / int(requests.group(1)) * 1000 if int(requests.group(1)) else None)
                print(f"rep={rep} rps={rate.group(1)} requests={requests.group(1)} non2xx={non_2xx.group(1) if non_2xx else 0} "
                      f"socket_errors=[{errors.group(1).strip() if errors else 'none'}] lat_p50={p50.group(1) if p50 else '-'} "
                      f"lat_p99={p99.group(1) if p99 else '-'} server_cpu_s={server_cpu:.2f} "
                      f"server_cpu_s_per_1k_req={per_1k[-1]:.4f} wrk_cpu_s={wrk_cpu:.2f}", flush=True)
                time.sleep(1)
            peak, after = harness.status_kib(server.pid, "VmHWM"), harness.status_kib(server.pid, "VmRSS")
            print(f"RESULT wrk {name} {path} (t={threads} c={connections} d={seconds}s x{reps}): median rps={median(rates):.2f} "
                  f"[all: {' '.join(f'{r:.2f}' for r in rates)}], server CPU-s/1k req median={median([p for p in per_1k if p is not None]):.4f}, "
                  f"idle RSS={idle_rss / 1024:.1f} MiB, peak RSS={peak / 1024:.1f} MiB, RSS after={after / 1024:.1f} MiB, body={len(body)} B",
                  flush=True)
            return 0
        finally:
            harness.stop(server)
            if target:
                target.stop()


if __name__ == "__main__":
    sys.exit(harness.main_guard(main))
