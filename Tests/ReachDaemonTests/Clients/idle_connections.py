"""Holds many idle connections to a reachd status endpoint and reports what they cost it.

Usage: idle_connections.py PORT PID COUNT

Half the connections send nothing, half a first request line and then stall. While they are
held, a fresh client must still be answered. Prints one JSON object: reachd's resident memory
before and while they are held, the fresh client's status line, and how many of them the server
closed, and how long after the fresh client that took.
"""
import json
import resource
import select
import socket
import sys
import time


def resident_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    port, pid, count = (int(argument) for argument in sys.argv[1:4])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, count + 256)), hard))
    before = resident_kib(pid)
    held = {}
    for index in range(count):
        connection = socket.create_connection(("127.0.0.1", port), timeout=10)
        if index % 2:
            connection.sendall(b"GET /v1/status HTTP/1.1\r\n")
        held[connection.fileno()] = connection

    with socket.create_connection(("127.0.0.1", port), timeout=5) as fresh:
        fresh.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := fresh.recv(4096):
            answer += chunk
    time.sleep(0.5)
    during = resident_kib(pid)

    # The server closes them after its idle timeout; anything it sends first is read and dropped.
    poller = select.poll()
    for descriptor in held:
        poller.register(descriptor, select.POLLIN)
    start = time.monotonic()
    while held and time.monotonic() - start < 30:
        for descriptor, _ in poller.poll(250):
            connection = held.get(descriptor)
            if connection is None:
                continue
            try:
                data = connection.recv(4096)
            except OSError:
                data = b""
            if not data:
                poller.unregister(descriptor)
                connection.close()
                del held[descriptor]
    print(json.dumps({
        "rss_before_kib": before,
        "rss_during_kib": during,
        "fresh_status_line": answer.split(b"\r\n", 1)[0].decode(errors="replace"),
        "closed": count - len(held),
        "seconds_to_close": round(time.monotonic() - start, 2),
    }), flush=True)


if __name__ == "__main__":
    main()
