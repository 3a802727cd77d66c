#!/usr/bin/env python3
"""Records real DNS answers into FuzzTesting/Corpora/dns-message/: the seeds of the dns-message fuzz
target, and the answers ReachProbesTests reads back (DNSMessageTests).

Run as root (it makes a network namespace, so that both resolvers own port 53 on its loopback):

    python3 FuzzTesting/record-dns-answers.py

Two resolvers answer the same questions about a zone of their own, `corpus.test`:
  * dnsmasq (Debian's dnsmasq-base), with host, CNAME, MX, TXT, SRV, PTR records and `local=` for
    NXDOMAIN; outside its zone, REFUSED (no upstream);
  * unbound (Debian's unbound), serving the zone as local data, its SOA and NS included; outside
    it, SERVFAIL (no upstream in the namespace), REFUSED to a client its access control refuses.
Each answer is written exactly as it came off the wire (TCP without its two-byte length), named
`<resolver>-<question>.bin`; among them answers truncated over UDP (TC) and their whole TCP form.
The namespace and the resolvers are removed at the end.
"""

import os
import random
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

NS = "rddnsrec"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Corpora", "dns-message")
TYPES = {"A": 1, "NS": 2, "CNAME": 5, "SOA": 6, "PTR": 12, "MX": 15, "TXT": 16, "AAAA": 28, "SRV": 33}
BIG = ["record %02d %s" % (i, "x" * 60) for i in range(40)]

DNSMASQ = """no-resolv
no-hosts
no-poll
bind-interfaces
listen-address=127.0.0.1
port=53
local=/corpus.test/
host-record=api.corpus.test,192.0.2.10,2001:db8::10
cname=www.corpus.test,api.corpus.test
mx-host=corpus.test,mail.corpus.test,10
txt-record=corpus.test,"v=spf1 -all","second string"
srv-host=_sip._tcp.corpus.test,sip.corpus.test,5060,10,5
ptr-record=10.2.0.192.in-addr.arpa,api.corpus.test
{big}
pid-file={dir}/dnsmasq.pid
user=root
group=root
"""

UNBOUND = """server:
  interface: 127.0.0.2
  port: 53
  do-daemonize: no
  username: ""
  chroot: ""
  directory: "{dir}"
  pidfile: ""
  use-syslog: no
  logfile: "{dir}/unbound.log"
  access-control: 127.0.0.0/8 allow
  access-control: 127.0.0.3/32 refuse
  do-ip6: no
  outgoing-range: 8
  num-threads: 1
  local-zone: "corpus.test." static
  local-data: "corpus.test. 3600 IN SOA ns1.corpus.test. hostmaster.corpus.test. 2024010101 3600 600 86400 300"
  local-data: "corpus.test. 3600 IN NS ns1.corpus.test."
  local-data: "api.corpus.test. 300 IN A 192.0.2.10"
  local-data: "api.corpus.test. 300 IN AAAA 2001:db8::10"
  local-data: "www.corpus.test. 300 IN CNAME api.corpus.test."
  local-data: "corpus.test. 300 IN MX 10 mail.corpus.test."
  local-data: 'corpus.test. 300 IN TXT "v=spf1 -all" "second string"'
  local-data: "_sip._tcp.corpus.test. 300 IN SRV 10 5 5060 sip.corpus.test."
  local-data-ptr: "192.0.2.10 api.corpus.test"
{big}
remote-control:
  control-enable: no
"""

QUESTIONS = [
    ("A", "api.corpus.test"), ("AAAA", "api.corpus.test"), ("CNAME", "www.corpus.test"), ("A", "www.corpus.test"),
    ("MX", "corpus.test"), ("TXT", "corpus.test"), ("SRV", "_sip._tcp.corpus.test"), ("NS", "corpus.test"),
    ("SOA", "corpus.test"), ("PTR", "10.2.0.192.in-addr.arpa"), ("A", "missing.corpus.test"),
    ("MX", "api.corpus.test"), ("A", "outside.example"), ("TXT", "big.corpus.test"),
]


def run(*args):
    subprocess.run(args, check=True)


def query(name, qtype, edns=True):
    header = struct.pack("!HHHHHH", random.randrange(65536), 0x0100, 1, 0, 0, 1 if edns else 0)
    question = b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0" + struct.pack("!HH", qtype, 1)
    opt = b"\0" + struct.pack("!HHIH", 41, 1232, 0, 0) if edns else b""
    return header + question + opt


def ask(server, name, qtype, tcp=False, edns=True, source=None):
    message = query(name, qtype, edns)
    if tcp:
        with socket.create_connection((server, 53), timeout=5, source_address=(source, 0) if source else None) as s:
            s.sendall(struct.pack("!H", len(message)) + message)
            length = struct.unpack("!H", s.recv(2, socket.MSG_WAITALL))[0]
            return s.recv(length, socket.MSG_WAITALL)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(8)
        if source:
            s.bind((source, 0))
        s.sendto(message, (server, 53))
        return s.recv(65535)


def record(resolver, server, source=None):
    for qtype, name in QUESTIONS:
        answer = ask(server, name, TYPES[qtype], source=source)
        write(f"{resolver}-{qtype}-{name}", answer)
        if answer[2] & 0x02:  # TC: the whole answer over TCP too
            write(f"{resolver}-{qtype}-{name}-tcp", ask(server, name, TYPES[qtype], tcp=True, source=source))
    # Without EDNS: a 512-byte datagram, so the big answer arrives truncated.
    write(f"{resolver}-TXT-big.corpus.test-no-edns", ask(server, "big.corpus.test", 16, edns=False, source=source))


def write(label, answer):
    path = os.path.join(OUT, label.replace("/", "_") + ".bin")
    with open(path, "wb") as f:
        f.write(answer)
    print(f"{path}: {len(answer)} bytes, rcode {answer[3] & 0xF}{', truncated' if answer[2] & 0x02 else ''}")


def main():
    if os.geteuid() != 0:
        sys.exit("run as root: it makes a network namespace")
    if len(sys.argv) > 1 and sys.argv[1] == "--inside":
        return inside(sys.argv[2])
    directory = tempfile.mkdtemp(prefix="dns-record.")
    subprocess.run(["ip", "netns", "del", NS], stderr=subprocess.DEVNULL)
    run("ip", "netns", "add", NS)
    try:
        run("ip", "-n", NS, "link", "set", "lo", "up")
        run("ip", "-n", NS, "addr", "add", "127.0.0.2/8", "dev", "lo")
        run("ip", "netns", "exec", NS, sys.executable, os.path.abspath(__file__), "--inside", directory)
    finally:
        subprocess.run(["ip", "netns", "del", NS])
        shutil.rmtree(directory, ignore_errors=True)


def inside(directory):
    os.makedirs(OUT, exist_ok=True)
    big_dnsmasq = "\n".join(f'txt-record=big.corpus.test,"{line}"' for line in BIG)
    big_unbound = "\n".join(f"  local-data: 'big.corpus.test. 300 IN TXT \"{line}\"'" for line in BIG)
    with open(f"{directory}/dnsmasq.conf", "w") as f:
        f.write(DNSMASQ.format(dir=directory, big=big_dnsmasq))
    with open(f"{directory}/unbound.conf", "w") as f:
        f.write(UNBOUND.format(dir=directory, big=big_unbound))
    run("/usr/sbin/dnsmasq", f"--conf-file={directory}/dnsmasq.conf")
    unbound = subprocess.Popen(["/usr/sbin/unbound", "-c", f"{directory}/unbound.conf"])
    try:
        for _ in range(100):
            try:
                ask("127.0.0.2", "api.corpus.test", 1)
                break
            except OSError:
                time.sleep(0.1)
        record("dnsmasq", "127.0.0.1")
        record("unbound", "127.0.0.2")
        write("unbound-A-api.corpus.test-refused", ask("127.0.0.2", "api.corpus.test", 1, source="127.0.0.3"))
    finally:
        unbound.terminate()
        unbound.wait()
        with open(f"{directory}/dnsmasq.pid") as f:
            os.kill(int(f.read()), 15)


if __name__ == "__main__":
    main()
