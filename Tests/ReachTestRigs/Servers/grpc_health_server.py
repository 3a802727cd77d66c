#!/usr/bin/env python3
"""The gRPC health stand-in of reachd's tests (the prober's tests, the fault matrix): grpcio's own
grpc.health.v1 servicer, an implementation nobody here wrote.

Usage: grpc_health_server.py [--host HOST] [--without-health | --http1] [--tls CERT KEY] [PORT]
(PORT 0 or absent: any free port)

Listens on HOST (127.0.0.1 by default) and prints the port it bound as the first line of stdout.

--without-health runs a gRPC server with no services at all, so every health call fails with
UNIMPLEMENTED; --http1 runs a plain HTTP/1.1 server (not gRPC) that answers 404 to everything.
--tls serves gRPC over TLS with the PEM certificate chain CERT and its key KEY.
Both still take the commands below (acknowledged, without effect), so tests drive them alike. Then reads one
command per line on stdin and answers each with a line `ok` (or `error: ...`) once applied:

    serving [SERVICE]          set SERVICE (default: the server as a whole, "") to SERVING
    not_serving [SERVICE]      set it to NOT_SERVING
    unknown [SERVICE]          set it to UNKNOWN
    service_unknown [SERVICE]  set it to SERVICE_UNKNOWN
    quit                       stop the server and exit

End of stdin stops the server too, so it never outlives the test that started it.
"""

import http.server
import sys
import threading
from concurrent import futures

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

STATUSES = {
    "serving": health_pb2.HealthCheckResponse.SERVING,
    "not_serving": health_pb2.HealthCheckResponse.NOT_SERVING,
    "unknown": health_pb2.HealthCheckResponse.UNKNOWN,
    "service_unknown": health_pb2.HealthCheckResponse.SERVICE_UNKNOWN,
}


def start_http1(requested: int):
    """A plain HTTP/1.1 server in a thread; returns (port, stop)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", requested), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd.server_address[1], httpd.shutdown


def start_grpc(host: str, requested: int, with_health: bool, tls=None):
    """A gRPC server, with grpcio's health servicer or with no services, over TLS with tls=(cert, key);
    returns (port, stop, servicer)."""
    # A Watch holds a thread while it lasts (below): room for many, zombies of a lost link included.
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=64))
    # Blocking watches: grpcio's default servicer sends to every watcher under its lock and waits for
    # the serve thread, which may be waiting for that lock to close another watch (a deadlock:
    # grpc/grpc#43403); a blocking watch only queues the new status for its own thread.
    servicer = health.HealthServicer(experimental_non_blocking=False)
    if with_health:
        health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    if tls:
        with open(tls[0], "rb") as cert, open(tls[1], "rb") as key:
            credentials = grpc.ssl_server_credentials([(key.read(), cert.read())])
        port = server.add_secure_port(f"{host}:{requested}", credentials)
    else:
        port = server.add_insecure_port(f"{host}:{requested}")
    if port == 0:
        raise OSError(f"cannot bind {host}:{requested}")
    server.start()
    return port, lambda: server.stop(grace=None), servicer


def main() -> int:
    args = sys.argv[1:]
    host = "127.0.0.1"
    if args and args[0] == "--host":
        host = args[1]
        args = args[2:]
    mode = args.pop(0) if args and args[0].startswith("--") and args[0] != "--tls" else "--health"
    tls = None
    if args and args[0] == "--tls":
        tls = (args[1], args[2])
        args = args[3:]
    requested = int(args[0]) if args else 0
    if mode == "--http1":
        port, stop = start_http1(requested)
        servicer = health.HealthServicer()
    elif mode in ("--health", "--without-health"):
        port, stop, servicer = start_grpc(host, requested, with_health=(mode == "--health"), tls=tls)
    else:
        print(f"error: unknown mode {mode!r}", file=sys.stderr, flush=True)
        return 2
    print(port, flush=True)

    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        command, service = words[0], (words[1] if len(words) > 1 else "")
        if command == "quit":
            break
        status = STATUSES.get(command)
        if status is None:
            print(f"error: unknown command {command!r}", flush=True)
            continue
        servicer.set(service, status)
        print("ok", flush=True)

    stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
