#!/usr/bin/env python3
"""Captures real rtnetlink datagrams for ReachLinkTests and writes CapturedNetlink.swift.

Run as root (needs CAP_NET_ADMIN and CAP_SYS_ADMIN):

    python3 Tests/ReachLinkTests/Fixtures/capture-netlink.py > Tests/ReachLinkTests/Fixtures/CapturedNetlink.swift

It creates the throw-away namespace `rdcap`, builds a small set of devices in it, opens an
AF_NETLINK/NETLINK_ROUTE socket inside it subscribed to the groups the adapter uses, and records every
datagram exactly as recv() returned it: the three dumps, then the notifications of a scripted
sequence of changes, then an NLMSG_ERROR and an acknowledgement. The namespace is deleted at the end.
"""

import ctypes
import os
import select
import socket
import struct
import subprocess
import sys
import time

NS = "rdcap"
GROUPS = 0x1 | 0x10 | 0x40 | 0x100 | 0x400  # link, IPv4/IPv6 address, IPv4/IPv6 route
NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP = 0x1, 0x4, 0x300
RTM_NEWLINK, RTM_GETLINK, RTM_GETADDR, RTM_GETROUTE = 16, 18, 22, 26
NLMSG_DONE = 3


def ip(*args, check=True):
    subprocess.run(["ip", "-n", NS, *args], check=check, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def enter_namespace():
    # os.setns exists only from Python 3.12.
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(f"/run/netns/{NS}", os.O_RDONLY)
    if libc.setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
        raise OSError(ctypes.get_errno(), "setns")
    os.close(fd)


def drain(sock, quiet=0.25):
    """Every datagram until nothing arrives for `quiet` seconds."""
    datagrams = []
    while select.select([sock], [], [], quiet)[0]:
        datagrams.append(sock.recv(65536))
    return datagrams


def dump(sock, msg_type, body_len, seq):
    sock.send(struct.pack("=IHHII", 16 + body_len, msg_type, NLM_F_REQUEST | NLM_F_DUMP, seq, 0) + bytes(body_len))
    datagrams = []
    while True:
        data = sock.recv(65536)
        datagrams.append(data)
        length, kind = struct.unpack_from("=IH", data, 0)
        offsets, offset = [], 0
        while offset + 16 <= len(data):
            length, kind = struct.unpack_from("=IH", data, offset)
            offsets.append(kind)
            offset += (length + 3) & ~3
        if NLMSG_DONE in offsets:
            return datagrams


def step(sock, *commands):
    for command in commands:
        ip(*command)
    return drain(sock)


def main():
    subprocess.run(["ip", "netns", "del", NS], stderr=subprocess.DEVNULL)
    subprocess.run(["ip", "netns", "add", NS], check=True)
    try:
        ip("link", "set", "lo", "up")
        ip("link", "add", "rd0", "type", "veth", "peer", "name", "rd1")
        ip("link", "add", "rdbr0", "type", "bridge")
        ip("link", "add", "rdbr1", "type", "bridge")
        ip("tuntap", "add", "rdtun0", "mode", "tun")
        ip("link", "add", "link", "rd0", "name", "rdmv0", "type", "macvlan", "mode", "bridge", check=False)
        ip("link", "add", "rdvx0", "type", "vxlan", "id", "42", "dstport", "4789", "dev", "rd0", check=False)
        ip("link", "add", "rdwg0", "type", "wireguard", check=False)
        for name in ["rd0", "rd1", "rdbr0", "rdbr1"]:
            ip("link", "set", name, "up")
        ip("addr", "add", "198.51.100.2/24", "dev", "rd0")
        ip("addr", "add", "198.51.100.3/24", "dev", "rd1")
        ip("addr", "add", "2001:db8::2/64", "dev", "rd0", "nodad")
        ip("addr", "add", "2001:db8:1::2/64", "dev", "rd1")  # stays tentative for a while
        ip("route", "add", "default", "via", "198.51.100.1", "dev", "rd0")
        ip("route", "add", "203.0.113.0/24", "nexthop", "via", "198.51.100.1", "dev", "rd0",
           "nexthop", "via", "198.51.100.4", "dev", "rd1")
        ip("-6", "route", "add", "default", "via", "2001:db8::1", "dev", "rd0")
        # Not part of the suite (run by hand to regenerate the fixture, which is what tests read): a
        # pause for the devices' asynchronous state (carrier, operstate) to settle before the dumps.
        time.sleep(0.3)

        enter_namespace()
        sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        sock.bind((0, GROUPS))
        drain(sock, 0.1)

        captures = {}
        captures["linkDump"] = dump(sock, RTM_GETLINK, 16, 101)
        captures["addressDump"] = dump(sock, RTM_GETADDR, 8, 102)
        captures["routeDump"] = dump(sock, RTM_GETROUTE, 12, 103)
        captures["linkDown"] = step(sock, ["link", "set", "rd0", "down"])
        captures["linkUp"] = step(sock, ["link", "set", "rd0", "up"])
        captures["peerDown"] = step(sock, ["link", "set", "rd1", "down"])
        captures["peerUp"] = step(sock, ["link", "set", "rd1", "up"])
        captures["addressRemoved"] = step(sock, ["addr", "del", "198.51.100.2/24", "dev", "rd0"])
        captures["addressAdded"] = step(sock, ["addr", "add", "198.51.100.2/24", "dev", "rd0"])
        captures["defaultRouteAdded"] = step(sock, ["route", "add", "default", "via", "198.51.100.1", "dev", "rd0"])
        captures["defaultRouteRemoved"] = step(sock, ["route", "del", "default", "via", "198.51.100.1", "dev", "rd0"])
        captures["renamed"] = step(sock, ["link", "set", "rdbr1", "down"],
                                   ["link", "set", "rdbr1", "name", "rdbr9"])
        captures["deleted"] = step(sock, ["link", "del", "rdbr9"])

        # NLMSG_ERROR: RTM_GETLINK for an index that does not exist, with an ack requested.
        sock.send(struct.pack("=IHHIIBBHiII", 32, RTM_GETLINK, NLM_F_REQUEST | NLM_F_ACK, 201, 0,
                              0, 0, 0, 999999, 0, 0))
        captures["errorNoDevice"] = [sock.recv(65536)]
        # An acknowledgement: a no-op RTM_NEWLINK on lo (index 1), with an ack requested.
        sock.send(struct.pack("=IHHIIBBHiII", 32, RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, 202, 0,
                              0, 0, 0, 1, 0, 0))
        captures["acknowledgement"] = drain(sock)
        sock.close()
    finally:
        subprocess.run(["ip", "netns", "del", NS])

    kernel = os.uname().release
    print("// Generated by capture-netlink.py (beside this file) on Linux %s, as root, in the throw-away" % kernel)
    print("// namespace `rdcap`: real datagrams exactly as recv() returned them on a NETLINK_ROUTE socket.")
    print("// Devices: lo, veth rd0/rd1, bridges rdbr0/rdbr1 (rdbr1 renamed rdbr9, then deleted), tun rdtun0, and")
    print("// where the kernel has them macvlan rdmv0, vxlan rdvx0, wireguard rdwg0; 198.51.100.0/24 and")
    print("// 2001:db8::/64 on rd0/rd1, default routes via rd0,")
    print("// a multipath 203.0.113.0/24. Dump sequence numbers: links 101, addresses 102, routes 103.")
    print("// Regenerate rather than edit.")
    print()
    print("/// Real rtnetlink captures, one hex string per datagram.")
    print("enum CapturedNetlink {")
    for name, datagrams in captures.items():
        print(f"    static let {name}: [String] = [")
        for data in datagrams:
            print(f'        "{data.hex()}",')
        print("    ]")
    print("}")


if __name__ == "__main__":
    main()
