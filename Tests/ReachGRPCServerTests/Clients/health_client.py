#!/usr/bin/env python3
"""A grpc.health.v1 client for the ReachGRPCServer tests: grpcio's own generated HealthStub.

Usage: health_client.py PORT check SERVICE | watch SERVICE | list

Talks plaintext HTTP/2 to 127.0.0.1:PORT and prints one line per answer, flushed at once:

    check SERVICE   the status name (SERVING, NOT_SERVING, UNKNOWN, ...), or `error: CODE` when
                    the call fails (NOT_FOUND for an unknown service)
    watch SERVICE   `ready` once the call is under way, then each status name as it arrives, then
                    `end: OK` when the server ends the stream, or `end: CODE` when it fails
    list            one line per service, `"NAME" STATUS` sorted by name (the name JSON-quoted,
                    so the server as a whole shows as ""), or `error: CODE`

With HEALTH_TOKEN set in the environment, every call sends `authorization: Bearer <token>`.

Exits 0 after printing, whatever the answer, so the test judges the lines alone.
"""

import json
import os
import sys

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

DEADLINE = 5  # seconds, for the unary calls


def status_name(status: int) -> str:
    return health_pb2.HealthCheckResponse.ServingStatus.Name(status)


def say(line: str) -> None:
    print(line, flush=True)


def main() -> None:
    port, command = sys.argv[1], sys.argv[2]
    token = os.environ.get("HEALTH_TOKEN")
    metadata = [("authorization", f"Bearer {token}")] if token is not None else None
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            if command == "check":
                response = stub.Check(health_pb2.HealthCheckRequest(service=sys.argv[3]), timeout=DEADLINE, metadata=metadata)
                say(status_name(response.status))
            elif command == "watch":
                call = stub.Watch(health_pb2.HealthCheckRequest(service=sys.argv[3]), metadata=metadata)
                say("ready")
                for response in call:
                    say(status_name(response.status))
                say(f"end: {call.code().name}")
            elif command == "list":
                response = stub.List(health_pb2.HealthListRequest(), timeout=DEADLINE, metadata=metadata)
                for name in sorted(response.statuses):
                    say(f"{json.dumps(name)} {status_name(response.statuses[name].status)}")
            else:
                raise SystemExit(f"unknown command {command!r}")
        except grpc.RpcError as error:
            prefix = "end" if command == "watch" else "error"
            say(f"{prefix}: {error.code().name}")


if __name__ == "__main__":
    main()
