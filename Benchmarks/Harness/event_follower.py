#!/usr/bin/env python3
"""Follows reachd's event stream (GET /v1/events) and checks that the event ids have no gaps.

Meant to run as a process of its own, doing nothing else (one thread, blocking reads), so that a
gap it sees cannot be blamed on its own lateness: reachd skips a subscriber ahead only when it has
more unread events than its buffer holds, and a client that keeps reading never should.

For each gap it keeps what tells whose fault it was:
  * queued_bytes: what the kernel held unread on the socket right after the read that brought the
    event (FIONREAD): a follower that was behind finds its receive queue full;
  * since_previous_event_s: how long it had waited for this event;
  * delivery_delay_s: wall time at receipt minus the newest `last_checked_at` in the event (about when
    reachd published it), for this event and the one before; a reading client that was handed a gap
    promptly was skipped by the server, not by its own slowness;
  * max_queued_bytes_10s: the largest receive queue in the 10 s before.

  event_follower.py --port PORT [--json-out FILE] [--status-file FILE] [--max-seconds 7200]
                    [--connect-within 5]

It may be started before reachd: it tries to connect every 2 ms for --connect-within seconds, so it
subscribes the moment the API listens and sees the events of the first probe round too.

Runs until SIGTERM/SIGINT, the stream's end, or --max-seconds; then writes the JSON summary
(events, gaps, event_id_gaps, resets, delivery delay median/p99/max, receive queue max) and prints
one RESULT line.
"""
import argparse
import datetime
import fcntl
import json
import os
import signal
import socket
import struct
import sys
import termios
import time
from collections import deque

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402


def newest_check(data):
    """The newest last_checked_at of the event's targets, as a POSIX time; None if it has none."""
    try:
        document = json.loads(data)
    except ValueError:
        return None
    newest = None
    for target in document.get("targets") or []:
        stamp = target.get("last_checked_at")
        if stamp:
            try:
                t = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
            except ValueError:
                continue
            newest = t if newest is None or t > newest else newest
    return newest


class Follower:
    def __init__(self, port, host="127.0.0.1", status_file=None, connect_within=5.0):
        self.port, self.host, self.status_file, self.connect_within = port, host, status_file, connect_within
        self.events = self.resets = self.heartbeats = 0
        self.gaps = []
        self.last_id = None
        self.delays = []
        self.max_queued = 0
        self.recent_queue = deque()  # (monotonic, queued bytes) over the last 10 s
        self.last_event_at = None
        self.last_delay = None
        self.stopping = False
        self.ended = None

    def queued(self, sock):
        return struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0\0\0\0"))[0]

    def frame(self, lines, queued):
        fields = {}
        for line in lines:
            if line.startswith(":"):
                self.heartbeats += 1
                continue
            key, _, value = line.partition(":")
            fields[key] = value[1:] if value.startswith(" ") else value
        if "id" not in fields:
            return
        now, wall = time.monotonic(), time.time()
        sequence = int(fields["id"])
        checked = newest_check(fields.get("data", ""))
        delay = round(wall - checked, 4) if checked else None
        if delay is not None:
            self.delays.append(delay)
        if '"reset":true' in fields.get("data", "").replace(" ", ""):
            self.resets += 1
        if self.last_id is not None and sequence != self.last_id + 1:
            window = [q for t, q in self.recent_queue if t >= now - 10]
            self.gaps.append({
                "after_id": self.last_id, "id": sequence, "missing": sequence - self.last_id - 1,
                "at_s": round(now - self.started, 2), "queued_bytes": queued,
                "max_queued_bytes_10s": max(window, default=queued),
                "since_previous_event_s": round(now - self.last_event_at, 4) if self.last_event_at else None,
                "delivery_delay_s": delay, "previous_delivery_delay_s": self.last_delay})
            print(f"event_follower: gap after id {self.last_id}: got {sequence} ({sequence - self.last_id - 1} missing), "
                  f"receive queue {queued} B, delivery delay {delay} s", file=sys.stderr, flush=True)
        self.last_id, self.last_event_at, self.last_delay = sequence, now, delay
        self.events += 1
        if self.status_file:
            with open(self.status_file + ".part", "w") as f:
                f.write(f"{self.events} {len(self.gaps)}\n")
            os.replace(self.status_file + ".part", self.status_file)

    def connect(self):
        """Connects, retrying every 2 ms while nothing listens yet (reachd starting)."""
        deadline = time.monotonic() + self.connect_within
        while True:
            try:
                return socket.create_connection((self.host, self.port), timeout=5)
            except ConnectionRefusedError:
                if time.monotonic() > deadline or self.stopping:
                    raise SystemExit(f"nothing listened on {self.host}:{self.port} within {self.connect_within:g} s")
                time.sleep(0.002)

    def run(self):
        sock = self.connect()
        self.started = time.monotonic()
        sock.sendall(b"GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        sock.settimeout(1)
        raw = b""          # bytes as read
        body = b""         # de-chunked body not yet split into lines
        head_done, chunked, chunk_left = False, False, 0
        pending = []       # lines of the SSE frame being read
        try:
            while not self.stopping:
                try:
                    data = sock.recv(1 << 16)
                except socket.timeout:
                    continue
                if not data:
                    self.ended = "the server closed the stream"
                    break
                queued = self.queued(sock)
                now = time.monotonic()
                self.max_queued = max(self.max_queued, queued)
                self.recent_queue.append((now, queued))
                while self.recent_queue and self.recent_queue[0][0] < now - 10:
                    self.recent_queue.popleft()
                raw += data
                if not head_done:
                    if b"\r\n\r\n" not in raw:
                        continue
                    head, raw = raw.split(b"\r\n\r\n", 1)
                    if not head.startswith(b"HTTP/1.1 200"):
                        raise SystemExit("GET /v1/events answered " + head.split(b"\r\n")[0].decode(errors="replace"))
                    chunked = b"transfer-encoding: chunked" in head.lower()
                    head_done = True
                if chunked:  # take whole chunks out of raw
                    while True:
                        if chunk_left == 0:
                            if b"\r\n" not in raw:
                                break
                            size_line, rest = raw.split(b"\r\n", 1)
                            if not size_line:  # the CRLF that ends a chunk
                                raw = rest
                                continue
                            chunk_left = int(size_line.split(b";")[0], 16)
                            raw = rest
                            if chunk_left == 0:
                                self.ended = "the stream ended"
                                self.stopping = True
                                break
                        take = raw[:chunk_left]
                        body += take
                        raw = raw[len(take):]
                        chunk_left -= len(take)
                        if chunk_left:
                            break
                else:
                    body, raw = body + raw, b""
                *lines, body = body.split(b"\n")
                for line in lines:
                    line = line.decode(errors="replace").rstrip("\r")
                    if line:
                        pending.append(line)
                    elif pending:
                        self.frame(pending, queued)
                        pending = []
        finally:
            sock.close()

    def summary(self):
        return {"events": self.events, "event_id_gaps": len(self.gaps), "missing_events": sum(g["missing"] for g in self.gaps),
                "gaps": self.gaps, "resets": self.resets, "heartbeats": self.heartbeats, "ended": self.ended,
                "delivery_delay_s": {"median": harness.percentile(self.delays, 50), "p99": harness.percentile(self.delays, 99),
                                     "max": max(self.delays, default=None), "n": len(self.delays)},
                "max_queued_bytes": self.max_queued}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--json-out")
    ap.add_argument("--status-file", help="rewritten after each event: EVENTS GAPS")
    ap.add_argument("--max-seconds", type=float, default=7200)
    ap.add_argument("--connect-within", type=float, default=5.0, help="seconds to keep trying to connect")
    args = ap.parse_args()
    follower = Follower(args.port, status_file=args.status_file, connect_within=args.connect_within)

    def finish(*_):
        follower.stopping = True
    signal.signal(signal.SIGTERM, finish)
    signal.signal(signal.SIGINT, finish)
    signal.signal(signal.SIGALRM, finish)
    signal.alarm(int(args.max_seconds))
    try:
        follower.run()
    finally:
        result = follower.summary()
        if args.json_out:
            with open(args.json_out + ".part", "w") as f:
                json.dump(result, f, indent=1)
            os.replace(args.json_out + ".part", args.json_out)
        print(f"RESULT event_follower: events={result['events']} event_id_gaps={result['event_id_gaps']} "
              f"missing={result['missing_events']} resets={result['resets']} delivery delay median "
              f"{result['delivery_delay_s']['median']} s, p99 {result['delivery_delay_s']['p99']} s, "
              f"max receive queue {result['max_queued_bytes']} B", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(harness.main_guard(main))
