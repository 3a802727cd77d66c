#!/usr/bin/env python3
"""A webhook receiver for reachd's tests: verifies X-Reachd-Signature with the shared secret.

Usage: webhook_receiver.py LOG [--fail-first N [--then-silent]] [--never-accept] [--secret-file PATH]
Prints the port it listens on (127.0.0.1, a free port) on the first line of stdout, then serves
until killed. With --then-silent, requests after the first N failures get no answer at all.
Each request becomes one JSON line in LOG: the answer's status, whether the
signature matched, the event headers, and the body both parsed and as received.
"""
import hashlib
import hmac
import http.server
import json
import sys
import time

log_path = sys.argv[1]
args = sys.argv[2:]
fail_first = int(args[args.index("--fail-first") + 1]) if "--fail-first" in args else 0
never_accept = "--never-accept" in args
then_silent = "--then-silent" in args
secret = None
if "--secret-file" in args:
    with open(args[args.index("--secret-file") + 1], "rb") as f:
        secret = f.read().strip()
seen = 0


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        global seen
        seen += 1
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        signature = self.headers.get("X-Reachd-Signature")
        signature_ok = None
        if secret is not None:
            expected = "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()
            signature_ok = signature is not None and hmac.compare_digest(expected, signature)
        status = 503 if never_accept or seen <= fail_first else 204
        if signature_ok is False:
            status = 401
        with open(log_path, "a") as log:
            log.write(json.dumps({
                "status": status,
                "time": time.monotonic(),
                "signature_ok": signature_ok,
                "event": self.headers.get("X-Reachd-Event"),
                "sequence": self.headers.get("X-Reachd-Sequence"),
                "content_type": self.headers.get("Content-Type"),
                "body": json.loads(body),
                "raw": body.decode("utf-8"),
            }) + "\n")
        if then_silent and seen > fail_first:
            time.sleep(3600)
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *_):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
