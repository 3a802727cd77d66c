#!/usr/bin/env python3
"""The one stand-in HTTP(S) server of reachd's tests: a health endpoint that answers as the test
says, now and after every change it makes (python3's standard library only).

Usage: stand_in_server.py [OPTION...]
  --listen HOST:PORT      serve plain HTTP there (repeatable; PORT 0: one the kernel picks; HOST ::
                          with --dual-stack takes IPv4 too); 127.0.0.1:0 when no listener is given
  --tls-listen HOST:PORT  serve HTTPS there, with the certificate of --certificate (repeatable)
  --certificate CERT KEY  the PEM chain (leaf first) and key HTTPS presents
  --self-signed DIR NAME  make a self-signed certificate for NAME in DIR and present it
  --dual-stack            a listener on :: takes IPv4 too
  --blackhole HOST:PORT   a socket there that the kernel accepts connections on and nobody reads
  --path PATH             the mode answers this path only; other paths (but the fixed ones) 404
  --every-path            the mode answers every path, the fixed ones too (a captive portal
                          answering in every server's place)
  --log-requests          print `request METHOD PATH ACCEPT` for every request, in order
  --mode MODE...          the mode to start in (the words of a command below; the last option);
                          `ok` by default

It prints `listening HOST:PORT` for each listener (`listening-tls`, `listening-blackhole`), then
`ready`, then reads one command per line on stdin and answers `ack COMMAND` once it applies:
  ok                      200 `ok`                      (also: up)
  503 | down              503 `busy`
  status CODE [BODY...]   CODE with BODY (`ok` when none)
  json BODY...            200 with BODY as application/captive+json (an RFC 8908 API's answer)
  redirect URL            302 to URL (a captive portal's first move)
  login                   200 text/html, a sign-in page, for every path (a portal that fools a check)
  slow SECONDS            200 `ok`, SECONDS late (also: delay SECONDS, which keeps the status)
  retry-after SECONDS     503 with `Retry-After: SECONDS`
  once COMMAND            answer the next request as COMMAND says, then as before
  garbage                 bytes that are not HTTP
  stall                   a head promising 100 bytes, 2 of them, then silence
  close | open            stop listening (connections are refused) | listen again
  restarting SECONDS      closed and reopened every 500 ms (down 100-400 ms each time), then open
  quit                    stop (end of stdin stops it too)
Fixed paths, whatever the mode: /ok, /status/CODE, /slow/MS, /redirect/HOST/PATH, /stall-body,
/garbage, /json/VALUE ({"status": VALUE, "checks": {"db": true}}), /big/KIB, /auth (200 with
`Authorization: Bearer s3cret` and `X-Probe: yes`, else 401), /reset (the connection reset),
/connections (how many were accepted), /generate_204 (204).
"""

import asyncio
import os
import random
import socket
import ssl
import struct
import subprocess
import sys
import threading

LOGIN_PAGE = b"<html><body><form>Sign in to the network</form></body></html>"


class Server:
    def __init__(self, options):
        self.options = options
        self.mode = ("ok", [])
        self.once = None
        self.delay = 0.0
        self.connections = 0
        self.listeners = []  # (host, port, context, asyncio server or None)
        self.context = None

    # The answer to one request.

    def answer(self, method, path, headers):
        fixed = None if self.options["every_path"] else self.fixed(path, headers)
        if fixed is not None:
            return fixed
        if self.options["path"] is not None and path.split("?")[0] != self.options["path"]:
            if self.mode[0] != "login":
                return self.response(404, b"not found")
        word, args = self.mode
        if self.once is not None:
            (word, args), self.once = self.once, None
        if word in ("ok", "up", "slow"):
            return self.response(200, b"ok")
        if word in ("503", "down"):
            return self.response(503, b"busy")
        if word == "status":
            return self.response(int(args[0]), " ".join(args[1:]).encode() or b"ok")
        if word == "retry-after":
            return self.head(503, [("Retry-After", args[0]), ("Content-Length", "0")])
        if word == "json":
            return self.response(200, " ".join(args).encode(), "application/captive+json")
        if word == "redirect":
            return self.head(302, [("Location", args[0]), ("Content-Length", "0")])
        if word == "login":
            return self.response(200, LOGIN_PAGE, "text/html")
        if word == "garbage":
            return b"\x00\xff\xfe garbage, not HTTP \x01\x02\r\n\r\n" * 8
        if word == "stall":
            return "stall"
        return self.response(500, b"unknown mode")

    def fixed(self, path, headers):
        parts = path.split("/")
        if path == "/ok":
            return self.response(200, b'{"status":"ok"}', "application/json")
        if path.startswith("/status/"):
            return self.response(int(parts[2]), b"{}", "application/json")
        if path.startswith("/redirect/"):
            return self.head(302, [("Location", "http://" + path[len("/redirect/"):]), ("Content-Length", "0")])
        if path.startswith("/slow/"):
            return ("slow", int(parts[2]) / 1000, self.response(200, b'{"status":"ok"}', "application/json"))
        if path == "/stall-body":
            return "stall"
        if path == "/garbage":
            return b"\x16\x03\x01 this is not HTTP at all\r\n\r\n"
        if path.startswith("/json/"):
            body = ('{"status": "%s", "checks": {"db": true}}' % parts[2]).encode()
            return self.response(200, body, "application/json")
        if path.startswith("/big/"):
            # A JSON document of N KiB whose /status is a long string: ok only past the first MiB.
            return self.response(200, b'{"status":"' + b"x" * (int(parts[2]) * 1024) + b'"}', "application/json")
        if path == "/auth":
            ok = headers.get("authorization") == "Bearer s3cret" and headers.get("x-probe") == "yes"
            return self.response(200 if ok else 401, b"{}", "application/json")
        if path == "/reset":
            return "reset"
        if path == "/connections":
            return self.response(200, str(self.connections).encode())
        if path == "/generate_204":
            return self.head(204, [("Content-Length", "0")])
        return None

    @staticmethod
    def head(status, fields):
        lines = [f"HTTP/1.1 {status} X"] + [f"{name}: {value}" for name, value in fields] + ["Connection: close"]
        return ("\r\n".join(lines) + "\r\n\r\n").encode()

    def response(self, status, body, content_type="text/plain"):
        return self.head(status, [("Content-Type", content_type), ("Content-Length", str(len(body)))]) + body

    async def handle(self, reader, writer):
        self.connections += 1
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode(errors="replace").split("\r\n")
            words = lines[0].split(" ")
            method, path = (words[0], words[1]) if len(words) > 2 else ("GET", "/")
            headers = {l.split(":", 1)[0].strip().lower(): l.split(":", 1)[1].strip() for l in lines[1:] if ":" in l}
            length = int(headers.get("content-length", "0") or "0")
            if length:
                await reader.readexactly(length)
            if self.options["log_requests"]:
                print("request", method, path, headers.get("accept", ""), flush=True)
            answer = self.answer(method, path, headers)
            fixed = not self.options["every_path"] and self.fixed(path, headers) is not None
            delay = 0.0 if fixed else self.delay
            if isinstance(answer, tuple):  # a fixed path's own slowness
                delay, answer = answer[1], answer[2]
            if delay:
                await asyncio.sleep(delay)  # the server's deliberate slowness
            if answer == "reset":
                sock = writer.get_extra_info("socket")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                writer.transport.abort()
                return
            if answer == "stall":
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nok")
                await writer.drain()
                await asyncio.sleep(3600)  # a body that stalls on purpose, until the client gives up
            writer.write(answer)
            await writer.drain()
        except Exception:
            pass
        writer.close()

    # Listening.

    async def listen(self, host, port, context):
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0 if self.options["dual_stack"] else 1)
        sock.bind((host, port))
        sock.listen(128)
        return await asyncio.start_server(self.handle, sock=sock, ssl=context)

    async def open(self):
        for index, (host, port, context, server) in enumerate(self.listeners):
            if server is None:
                server = await self.listen(host, port, context)
                self.listeners[index] = (host, server.sockets[0].getsockname()[1], context, server)

    async def close(self):
        for index, (host, port, context, server) in enumerate(self.listeners):
            if server is not None and context is None:
                server.close()
                self.listeners[index] = (host, port, context, None)

    async def command(self, line):
        words = line.split()
        word, args = words[0], words[1:]
        if word == "close":
            await self.close()
        elif word == "open":
            await self.open()
        elif word == "restarting":
            end = asyncio.get_running_loop().time() + float(args[0])
            while asyncio.get_running_loop().time() < end:
                down = random.uniform(0.1, 0.4)
                await self.close()
                await asyncio.sleep(down)  # a server restarting: down for a while, on purpose
                await self.open()
                await asyncio.sleep(0.5 - down)
            await self.open()
        elif word == "delay":
            self.delay = float(args[0])
        elif word == "once":
            self.once = (args[0], args[1:])
        else:
            self.mode = (word, args)
            self.delay = float(args[0]) if word == "slow" else 0.0

    async def run(self):
        plain = self.options["listen"] or [("127.0.0.1", 0)]
        self.listeners = [(host, port, None, None) for host, port in plain]
        self.listeners += [(host, port, self.context, None) for host, port in self.options["tls_listen"]]
        await self.open()
        for host, port, context, _ in self.listeners:
            print("listening-tls" if context else "listening", f"{host}:{port}", flush=True)
        blackholes = []
        for host, port in self.options["blackhole"]:
            sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((host, port))
            sock.listen(128)
            blackholes.append(sock)
            print("listening-blackhole", f"{host}:{sock.getsockname()[1]}", flush=True)
        if self.options["mode"]:
            await self.command(" ".join(self.options["mode"]))
        print("ready", flush=True)
        lines = asyncio.Queue()
        loop = asyncio.get_running_loop()

        def read():
            for line in sys.stdin:
                loop.call_soon_threadsafe(lines.put_nowait, line)
            loop.call_soon_threadsafe(lines.put_nowait, None)

        threading.Thread(target=read, daemon=True).start()
        while True:
            line = await lines.get()
            if line is None or line.strip() == "quit":
                return
            if line.strip():
                await self.command(line.strip())
                print("ack", line.strip(), flush=True)


def address(text):
    host, _, port = text.rpartition(":")
    return host.strip("[]"), int(port)


def main():
    args = sys.argv[1:]
    options = {"listen": [], "tls_listen": [], "blackhole": [], "dual_stack": False, "every_path": False, "path": None, "mode": [], "log_requests": False}
    certificate = None
    while args:
        option = args.pop(0)
        if option == "--listen":
            options["listen"].append(address(args.pop(0)))
        elif option == "--tls-listen":
            options["tls_listen"].append(address(args.pop(0)))
        elif option == "--certificate":
            certificate = (args.pop(0), args.pop(0))
        elif option == "--self-signed":
            directory, name = args.pop(0), args.pop(0)
            certificate = (os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem"))
            subprocess.run(
                ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", certificate[1],
                 "-out", certificate[0], "-days", "2", "-subj", "/CN=" + name, "-addext", "subjectAltName=DNS:" + name],
                check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            print("certificate", certificate[0], flush=True)
        elif option == "--blackhole":
            options["blackhole"].append(address(args.pop(0)))
        elif option == "--dual-stack":
            options["dual_stack"] = True
        elif option == "--every-path":
            options["every_path"] = True
        elif option == "--path":
            options["path"] = args.pop(0)
        elif option == "--mode":
            options["mode"] = args[:]
            args = []
        elif option == "--log-requests":
            options["log_requests"] = True
        else:
            print(f"error: unknown option {option!r}", file=sys.stderr, flush=True)
            return 2
    server = Server(options)
    if certificate:
        server.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        server.context.load_cert_chain(*certificate)
    asyncio.run(server.run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
