#!/usr/bin/env python3
"""A gRPC health server for the benchmarks (grpcio's own grpc.health.v1 servicer), reporting SERVING.

  grpc_health_server.py [PORT]      # PORT 0 or absent: a free one

Listens on 127.0.0.1 and prints the port it bound as the first line of stdout. Takes one command a
line on stdin: `serving` or `not_serving` (for the server as a whole), answered `ok`; `quit`, or
the end of stdin, stops it, so it never outlives the benchmark that started it. probe-benchmark's
grpc-watch kills it with SIGKILL to measure how fast a watching prober notices.
Needs grpcio-health-checking (pip install grpcio-health-checking).
"""
import sys
from concurrent import futures

try:
    import grpc
    from grpc_health.v1 import health, health_pb2, health_pb2_grpc
except ImportError:
    sys.exit("grpc_health_server.py: missing Python module grpc_health (pip install grpcio grpcio-health-checking)")


def main():
    requested = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    port = server.add_insecure_port(f"127.0.0.1:{requested}")
    if port == 0:
        sys.exit(f"grpc_health_server.py: cannot bind 127.0.0.1:{requested}")
    server.start()
    servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    print(port, flush=True)
    for line in sys.stdin:
        word = line.strip()
        if word == "quit":
            break
        if word in ("serving", "not_serving"):
            servicer.set("", health_pb2.HealthCheckResponse.SERVING if word == "serving" else health_pb2.HealthCheckResponse.NOT_SERVING)
            print("ok", flush=True)
        elif word:
            print(f"error: unknown command {word!r}", flush=True)
    server.stop(grace=None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
