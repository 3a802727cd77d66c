#!/usr/bin/env python3
"""What an ICMP echo and a DNS query cost reachd, beside the peers sending the same on the same
machine in the same run (issue 38, section 5):

  * ICMP: reachd with N `icmp` targets (5 echoes a probe, one probe a second each) against Debian's
    fping sending the same echoes (`fping -l -p 200`: each target every 200 ms), to 127.0.0.x;
  * DNS: reachd with N `dns` targets (one query a second each) against blackbox_exporter's dns
    prober driven at 1 Hz per target through /probe (as Prometheus would; the driver of
    probe_cost.py), both asking the same dnsmasq for the same A records.

Everything runs in a network namespace the script makes (its loopback only; ping sockets open to
every group there, as systemd's sysctl does): the script re-executes itself inside it. The echoes
and queries are counted by the kernel (nftables counters on the namespace's input), so both sides
are counted alike; CPU is the poller's on-CPU time (/proc/PID/task/*/schedstat), sampled every
second. Rounds interleave the pollers (ROUNDS × [peer, reachd], WINDOW seconds each after a warm-up),
so that the machine's mood is shared. Per second of each window: CPU microseconds per echo (per
query); the medians and p99 of those, and their ratios reachd / peer.

  dns_icmp_cost.py --reachd PATH [--n 100] [--rounds 3] [--window 20] [--warmup 5] [--json-out FILE]

Prints a line per window and RESULT lines; run as root.
"""
import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import probe_cost  # noqa: E402

NS = f"rdbench-{os.getpid()}"
FPING = "/usr/bin/fping"
DNSMASQ = "/usr/sbin/dnsmasq"
BLACKBOX_DNS = """modules:
  dns_a:
    prober: dns
    timeout: 2s
    dns:
      transport_protocol: udp
      preferred_ip_protocol: ip4
      query_name: "{name}"
      query_type: A
      valid_rcodes: [NOERROR]
"""


def counters():
    """The namespace's nftables counters: (echo requests, DNS queries) seen on input."""
    text = subprocess.run(["nft", "list", "table", "inet", "bench"], capture_output=True, text=True, check=True).stdout
    found = {m.group(2): int(m.group(1)) for m in re.finditer(r"packets (\d+) bytes \d+ comment \"(\w+)\"", text)}
    return found.get("echoes", 0), found.get("queries", 0)


def sample_window(pid, seconds, which):
    """Per second of the window: (CPU µs, packets) of the poller."""
    samples = []
    cpu, count = harness.cpu_ns(pid), counters()[which]
    start = time.monotonic()
    for second in range(1, int(seconds) + 1):
        time.sleep(max(0.0, start + second - time.monotonic()))
        now_cpu, now_count = harness.cpu_ns(pid), counters()[which]
        samples.append(((now_cpu - cpu) / 1e3, now_count - count))
        cpu, count = now_cpu, now_count
    return samples


def per_packet(samples):
    return [cpu / count for cpu, count in samples if count > 0]


def reachd_config(tmp, targets):
    path = os.path.join(tmp, "reachd.yaml")
    with open(path, "w") as f:
        f.write("history: { enabled: false }\nupstream: { check: none }\npolicy: any\ntargets:\n" + targets)
    return path


def run_icmp(args, tmp, n):
    addresses = [f"127.0.{1 + i // 250}.{1 + i % 250}" for i in range(n)]
    config = reachd_config(tmp, "".join(f"  - {{ name: p{i}, kind: icmp, host: {a} }}\n" for i, a in enumerate(addresses)))
    pollers = {
        # -l: loop; -p 200: each target every 200 ms (five a second, as a probe's burst); -i 1: 1 ms
        # between any two echoes at most; -b 16: reachd's 16 bytes of data; -q: no line per reply.
        "fping": [FPING, "-l", "-q", "-p", "200", "-i", "1", "-b", "16", "-t", "2000"] + addresses,
        "reachd": [args.reachd, "--config", config, "--listen", f"127.0.0.1:{harness.free_port()}", "--log-target", "stderr"],
    }
    return rounds(args, tmp, pollers, which=0, label="icmp", per_second=5 * n)


def run_dns(args, tmp, n):
    # One name, asked by every target of both: blackbox's module fixes its query name.
    names = ["api.bench.test"] * n
    with open(os.path.join(tmp, "dnsmasq.conf"), "w") as f:
        f.write("no-resolv\nno-hosts\nno-poll\nbind-interfaces\nlisten-address=127.0.0.1\nlocal=/bench.test/\n"
                f"pid-file={tmp}/dnsmasq.pid\nuser=root\ngroup=root\n"
                + "host-record=api.bench.test,192.0.2.10\n")
    subprocess.run([DNSMASQ, f"--conf-file={tmp}/dnsmasq.conf"], check=True)
    try:
        config = reachd_config(tmp, "".join(
            f"  - {{ name: d{i}, kind: dns, query: {name}, server: 127.0.0.1, expect: {{ answer_contains: 192.0.2.10 }} }}\n"
            for i, name in enumerate(names)))
        pollers = {
            "blackbox": None,
            "reachd": [args.reachd, "--config", config, "--listen", f"127.0.0.1:{harness.free_port()}", "--log-target", "stderr"],
        }
        return rounds(args, tmp, pollers, which=1, label="dns", per_second=n, names=names)
    finally:
        with open(f"{tmp}/dnsmasq.pid") as f:
            os.kill(int(f.read().strip()), 15)


def rounds(args, tmp, pollers, which, label, per_second, names=None):
    results = {name: [] for name in pollers}
    for round_ in range(args.rounds):
        for name, argv in pollers.items():
            driver = None
            if argv is None:  # blackbox: one module per name is one config; the query name is a /probe parameter instead
                process, port = harness.start_blackbox(tmp, config=BLACKBOX_DNS.format(name=names[0]))
                paths = [f"/probe?target=127.0.0.1:53&module=dns_a&id={i}".encode() for i in range(len(names))]
                seconds = args.warmup + args.window + 1
                driver = subprocess.Popen([sys.executable, __file__, "--drive", str(port), json.dumps([p.decode() for p in paths]), str(seconds)])
            else:
                process = harness.spawn(argv, os.path.join(tmp, f"{name}.log"))
            try:
                time.sleep(args.warmup)
                if process.poll() is not None:
                    raise SystemExit(f"{name} exited with {process.returncode}; see {tmp}/{name}.log")
                samples = sample_window(process.pid, args.window, which)
            finally:
                if driver:
                    driver.wait(60)
                harness.stop(process)
            rate = sum(c for _, c in samples) / len(samples)
            values = per_packet(samples)
            results[name] += values
            print(f"{label} round {round_ + 1} {name}: {rate:.0f}/s (target {per_second}/s), "
                  f"CPU {harness.percentile(values, 50):.2f} µs per {'echo' if which == 0 else 'query'} median", flush=True)
    return results


def drive(port, paths, seconds):
    """blackbox's /probe at 1 Hz per path, evenly spread (probe_cost.py's driver)."""
    records = asyncio.run(probe_cost.blackbox_driver(int(port), [p.encode() for p in json.loads(paths)], float(seconds), 100))
    failed = sum(1 for r in records if r[3] != 1)
    if failed:
        print(f"blackbox: {failed} of {len(records)} probes failed", file=sys.stderr)


def summary(label, results, peer, unit):
    ours, theirs = results["reachd"], results[peer]
    figures = {}
    for q in (50, 99):
        a, b = harness.percentile(ours, q), harness.percentile(theirs, q)
        figures[f"p{q}"] = {"reachd_us": round(a, 2), f"{peer}_us": round(b, 2), "ratio": round(a / b, 2)}
    print(f"RESULT {label}: CPU per {unit}: median reachd {figures['p50']['reachd_us']} µs, {peer} "
          f"{figures['p50'][peer + '_us']} µs, ratio {figures['p50']['ratio']}; p99 reachd {figures['p99']['reachd_us']} µs, "
          f"{peer} {figures['p99'][peer + '_us']} µs, ratio {figures['p99']['ratio']}", flush=True)
    return figures


def inside(args):
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    subprocess.run(["sysctl", "-qw", "net.ipv4.ping_group_range=0 2147483647"], check=True)
    subprocess.run(["nft", "-f", "-"], check=True, text=True, input="""table inet bench {
  chain input {
    type filter hook input priority 0;
    icmp type echo-request counter comment "echoes"
    udp dport 53 counter comment "queries"
  }
}
""")
    figures = {}
    with tempfile.TemporaryDirectory(prefix="dns-icmp-cost.") as tmp:
        if "icmp" in args.only:
            figures["icmp"] = summary("icmp", run_icmp(args, tmp, args.n), "fping", "echo")
        if "dns" in args.only:
            figures["dns"] = summary("dns", run_dns(args, tmp, args.n), "blackbox", "query")
    figures["n"] = args.n
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(figures, f, indent=1)
    return 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--drive":
        return drive(*sys.argv[2:5])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reachd", required=True)
    ap.add_argument("--n", type=int, default=100, help="targets (each 5 echoes/s, or 1 query/s)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--window", type=float, default=20.0)
    ap.add_argument("--warmup", type=float, default=5.0)
    ap.add_argument("--only", default="icmp,dns")
    ap.add_argument("--json-out")
    ap.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.inside:
        return inside(args)
    if os.geteuid() != 0:
        raise SystemExit("run as root: it makes a network namespace")
    harness.require(FPING, "fping")
    harness.require(DNSMASQ, "dnsmasq-base")
    harness.require_blackbox()
    harness.bounded(60 + 2 * args.rounds * 2 * (args.warmup + args.window + 10))
    subprocess.run(["ip", "netns", "add", NS], check=True)
    try:
        argv = [sys.executable, os.path.abspath(__file__), "--inside"] + sys.argv[1:]
        return subprocess.run(["ip", "netns", "exec", NS] + argv).returncode
    finally:
        subprocess.run(["ip", "netns", "del", NS])


if __name__ == "__main__":
    sys.exit(harness.main_guard(main))
