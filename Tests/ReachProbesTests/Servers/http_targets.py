#!/usr/bin/env python3
"""Misbehaving HTTP(S) health targets for reachd's probe tests (python3 stdlib + the openssl CLI).

Usage: http_targets.py DIRECTORY (where it writes its certificate and key; the caller removes it).
Prints one JSON line with its ports, then serves until stdin closes:
  {"http": PORT, "https": PORT, "blackhole": PORT, "ca": PATH, "server_name": NAME}
Paths on both http and https:
  /ok               200 {"status":"ok"}
  /status/CODE      that status
  /slow/MS          200 after MS milliseconds
  /stall-body       a head promising 100 bytes, 10 of them, then silence
  /garbage          bytes that are not HTTP
  /json/VALUE       200 {"status": "VALUE", "checks": {"db": true}}
  /auth             200 if "Authorization: Bearer s3cret" and "X-Probe: yes" came, else 401
  /reset            the connection reset after the request
  /connections      200 with the number of connections accepted so far
"blackhole" accepts connections in the kernel and never reads or answers.
The certificate is self-signed for NAME only (not for 127.0.0.1).
"""
import asyncio
import json
import os
import socket
import ssl
import struct
import subprocess
import sys

SERVER_NAME = "reachd-test.example"
connections = 0


def make_certificate(directory):
    cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
         "-days", "2", "-subj", "/CN=" + SERVER_NAME, "-addext", "subjectAltName=DNS:" + SERVER_NAME],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return cert, key


def response(status, body=b"", reason="X"):
    return (f"HTTP/1.1 {status} {reason}\r\nContent-Length: {len(body)}\r\n"
            f"Content-Type: application/json\r\nConnection: close\r\n\r\n").encode() + body


async def handle(reader, writer):
    global connections
    connections += 1
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except Exception:
        writer.close()
        return
    lines = head.decode(errors="replace").split("\r\n")
    path = lines[0].split(" ")[1] if len(lines[0].split(" ")) > 1 else "/"
    headers = {l.split(":", 1)[0].strip().lower(): l.split(":", 1)[1].strip() for l in lines[1:] if ":" in l}
    try:
        if path == "/ok":
            writer.write(response(200, b'{"status":"ok"}', "OK"))
        elif path.startswith("/status/"):
            writer.write(response(int(path.split("/")[2]), b"{}"))
        elif path.startswith("/redirect/"):
            location = "http://" + path[len("/redirect/"):]
            writer.write((f"HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\n"
                          f"Connection: close\r\n\r\n").encode())
        elif path.startswith("/slow/"):
            await asyncio.sleep(int(path.split("/")[2]) / 1000)  # the target's deliberate slowness
            writer.write(response(200, b'{"status":"ok"}', "OK"))
        elif path == "/stall-body":
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
            await writer.drain()
            await asyncio.sleep(3600)  # a body that stalls on purpose, until the client gives up
        elif path == "/garbage":
            writer.write(b"\x16\x03\x01 this is not HTTP at all\r\n\r\n")
        elif path.startswith("/json/"):
            value = path.split("/")[2]
            writer.write(response(200, json.dumps({"status": value, "checks": {"db": True}}).encode(), "OK"))
        elif path.startswith("/big/"):
            # A JSON document of N KiB whose /status is a long string: ok only past the first MiB.
            size = int(path.split("/")[2]) * 1024
            writer.write(response(200, b'{"status":"' + b"x" * size + b'"}', "OK"))
        elif path == "/auth":
            ok = headers.get("authorization") == "Bearer s3cret" and headers.get("x-probe") == "yes"
            writer.write(response(200 if ok else 401, b"{}"))
        elif path == "/reset":
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            return
        elif path == "/connections":
            writer.write(response(200, str(connections).encode(), "OK"))
        else:
            writer.write(response(404, b"{}"))
        await writer.drain()
    except Exception:
        pass
    writer.close()


async def main():
    cert, key = make_certificate(sys.argv[1])
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    plain = await asyncio.start_server(handle, "127.0.0.1", 0)
    secure = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=context)
    blackhole = socket.socket()
    blackhole.bind(("127.0.0.1", 0))
    blackhole.listen(1024)
    print(json.dumps({
        "http": plain.sockets[0].getsockname()[1],
        "https": secure.sockets[0].getsockname()[1],
        "blackhole": blackhole.getsockname()[1],
        "ca": cert,
        "server_name": SERVER_NAME,
    }), flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)


asyncio.run(main())
