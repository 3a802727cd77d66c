#!/usr/bin/env python3
"""A health target on loopback for reachd's benchmarks, switchable between four failure modes.

  GET /api/v1/health (any query) answers, by mode:
    healthy    200 {"status":"ok"}
    unhealthy  503 {"status":"unavailable"}
    blackhole  the connection is accepted and read, never answered (closed after --blackhole-max s)
    stopped    the listener is closed (connects are refused) and open connections are aborted;
               the process keeps running, so it can come back
  Any other path: 404.

A second listener, the control port (always 127.0.0.1), switches the mode and reports:
    GET /mode/<mode>   -> {"mode": ..., "t_switch": <CLOCK_MONOTONIC seconds at the switch>}
    GET /stats         -> counters: connections, requests, status_200, status_503, status_404, ...
    GET /quit          -> the process exits

  target_server.py [--host 127.0.0.1] [--port 0] [--control-port 0] [--mode healthy]
                   [--port-file FILE] [--max-seconds 3600] [--blackhole-max 120]
  target_server.py --selftest

Ports 0 pick free ones. Once both listen, one JSON line {"port", "control_port", "pid", "mode"} goes
to stdout and (atomically) to --port-file. The process always exits by itself after --max-seconds.
Standard library only; one asyncio loop, answers canned, so it takes well over 1,000 probes/s on
one core. Times are CLOCK_MONOTONIC (time.monotonic), the clock the benchmarks compare against.
"""
import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

MODES = ("healthy", "unhealthy", "blackhole", "stopped")
CONTROL_HOST = "127.0.0.1"


def canned(status, reason, body, keep_alive):
    connection = b"keep-alive" if keep_alive else b"close"
    return (b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: %s\r\n\r\n%s"
            % (status, reason, len(body), connection, body))


ANSWERS = {}
for _keep in (False, True):
    ANSWERS["healthy", _keep] = canned(200, b"OK", b'{"status":"ok"}', _keep)
    ANSWERS["unhealthy", _keep] = canned(503, b"Service Unavailable", b'{"status":"unavailable"}', _keep)
    ANSWERS["missing", _keep] = canned(404, b"Not Found", b'{"error":"not found"}', _keep)


class Target:
    """The mode, the listener, the open connections and the counters."""

    def __init__(self, host, port, mode, blackhole_max):
        self.host, self.port, self.mode, self.blackhole_max = host, port, mode, blackhole_max
        self.listener = None
        self.open = set()
        self.t_switch = time.monotonic()
        self.counts = dict.fromkeys(("connections", "requests", "status_200", "status_503", "status_404",
                                     "blackholed", "aborted_on_stop"), 0)

    async def listen(self):
        if self.listener is None:
            loop = asyncio.get_running_loop()
            self.listener = await loop.create_server(lambda: Connection(self), self.host, self.port,
                                                     reuse_address=True, backlog=4096)
            self.port = self.listener.sockets[0].getsockname()[1]

    async def switch(self, mode):
        if mode == "stopped":
            if self.listener is not None:
                self.listener.close()
                self.listener = None
            for connection in list(self.open):
                self.counts["aborted_on_stop"] += 1
                connection.transport.abort()
        else:
            await self.listen()
        self.mode = mode
        self.t_switch = time.monotonic()
        return self.t_switch


class Connection(asyncio.Protocol):
    """One client connection: HTTP/1.1 requests, pipelined or not, answered from the canned set."""

    def __init__(self, target):
        self.target, self.pending, self.transport, self.held = target, b"", None, None

    def connection_made(self, transport):
        self.transport = transport
        self.target.open.add(self)
        self.target.counts["connections"] += 1

    def connection_lost(self, exc):
        self.target.open.discard(self)
        if self.held is not None:
            self.held.cancel()

    def hold(self):
        """Blackhole: keep the connection, answer nothing, close it after blackhole_max."""
        if self.held is None:
            self.target.counts["blackholed"] += 1
            self.held = asyncio.get_running_loop().call_later(self.target.blackhole_max, self.transport.close)

    def data_received(self, data):
        target = self.target
        if self.held is not None or target.mode == "blackhole":
            self.hold()
            return
        self.pending += data
        while True:
            end = self.pending.find(b"\r\n\r\n")
            if end < 0:
                if len(self.pending) > 65536:
                    self.transport.close()
                return
            head, self.pending = self.pending[:end], self.pending[end + 4:]
            request_line = head.split(b"\r\n", 1)[0].split(b" ")
            path = request_line[1] if len(request_line) > 1 else b"/"
            keep_alive = (len(request_line) > 2 and request_line[2] == b"HTTP/1.1"
                          and b"connection: close" not in head.lower())
            target.counts["requests"] += 1
            if target.mode == "blackhole":
                self.hold()
                return
            if path.startswith(b"/api/v1/health"):
                kind = "healthy" if target.mode == "healthy" else "unhealthy"
                target.counts["status_200" if kind == "healthy" else "status_503"] += 1
            else:
                kind = "missing"
                target.counts["status_404"] += 1
            self.transport.write(ANSWERS[kind, keep_alive])
            if not keep_alive:
                self.transport.close()
                return


async def control(reader, writer, target, done):
    """One control request; always answered with JSON and closed."""
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        path = head.split(b"\r\n", 1)[0].split(b" ")[1].decode()
        status, body = 200, None
        if path.startswith("/mode/"):
            mode = path[len("/mode/"):]
            if mode in MODES:
                body = {"mode": mode, "t_switch": await target.switch(mode)}
            else:
                status, body = 400, {"error": "unknown mode", "modes": MODES}
        elif path.startswith("/stats"):
            body = dict(target.counts, mode=target.mode, t_switch=target.t_switch,
                        open_connections=len(target.open), pid=os.getpid())
        elif path.startswith("/quit"):
            body = {"quit": True}
            done.set()
        else:
            status, body = 404, {"error": "use /mode/<%s>, /stats or /quit" % "|".join(MODES)}
        data = json.dumps(body).encode()
        writer.write(b"HTTP/1.1 %d -\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
                     % (status, len(data), data))
        await writer.drain()
    except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, IndexError):
        pass
    finally:
        writer.close()


async def serve(args):
    port = args.port
    if port == 0:  # a fixed port for the life of the process: "stopped" then listens on it again
        with socket.socket() as probe:
            probe.bind((args.host, 0))
            port = probe.getsockname()[1]
    target = Target(args.host, port, args.mode, args.blackhole_max)
    await target.listen()  # proves the port, even for a target that starts stopped
    if args.mode == "stopped":
        await target.switch("stopped")
    done = asyncio.Event()
    control_server = await asyncio.start_server(lambda r, w: control(r, w, target, done), CONTROL_HOST, args.control_port)
    line = json.dumps({"port": target.port, "control_port": control_server.sockets[0].getsockname()[1],
                       "pid": os.getpid(), "mode": target.mode})
    if args.port_file:
        with open(args.port_file + ".part", "w") as f:
            f.write(line + "\n")
        os.replace(args.port_file + ".part", args.port_file)
    print(line, flush=True)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, done.set)
    try:
        await asyncio.wait_for(done.wait(), args.max_seconds)
    except asyncio.TimeoutError:
        pass
    control_server.close()
    await target.switch("stopped")


def selftest():
    """Starts a server, walks the four modes with a plain client, prints one RESULT line."""
    import http.client
    import urllib.request
    with tempfile.TemporaryDirectory(prefix="target-selftest.") as tmp:
        port_file = os.path.join(tmp, "ports.json")
        server = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--port-file", port_file, "--max-seconds", "60"],
                                  stdout=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 10
            while not os.path.exists(port_file) and time.monotonic() < deadline:
                time.sleep(0.05)
            ports = json.load(open(port_file))

            def probe():
                client = http.client.HTTPConnection("127.0.0.1", ports["port"], timeout=1)
                try:
                    client.request("GET", "/api/v1/health")
                    response = client.getresponse()
                    response.read()
                    return str(response.status)
                except ConnectionRefusedError:
                    return "refused"
                except (socket.timeout, TimeoutError):
                    return "timeout"
                finally:
                    client.close()

            seen = {}
            for mode in MODES + ("healthy",):
                urllib.request.urlopen(f"http://127.0.0.1:{ports['control_port']}/mode/{mode}", timeout=5).read()
                seen[mode if mode not in seen else "healthy_again"] = probe()
            want = {"healthy": "200", "unhealthy": "503", "blackhole": "timeout", "stopped": "refused", "healthy_again": "200"}
            print("RESULT target_server selftest: " + " ".join(f"{k}={v}" for k, v in seen.items())
                  + (" OK" if seen == want else f" FAIL (want {want})"))
            return 0 if seen == want else 1
        finally:
            server.terminate()
            server.wait(5)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", default="127.0.0.1", help="where the health endpoint listens (control stays on 127.0.0.1)")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--control-port", type=int, default=0)
    ap.add_argument("--mode", choices=MODES, default="healthy")
    ap.add_argument("--port-file")
    ap.add_argument("--max-seconds", type=float, default=3600.0)
    ap.add_argument("--blackhole-max", type=float, default=120.0)
    ap.add_argument("--selftest", action="store_true")
    args = ap.parse_args()
    if args.selftest:
        return selftest()
    asyncio.run(serve(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
