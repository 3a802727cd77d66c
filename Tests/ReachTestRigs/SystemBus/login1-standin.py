#!/usr/bin/python3
"""A stand-in for logind on a private test bus: owns org.freedesktop.login1 and emits
PrepareForSleep(b) from /org/freedesktop/login1 (org.freedesktop.login1.Manager) on request.

Usage: /usr/bin/python3 login1-standin.py BUS_ADDRESS

Prints "ready" once it owns the name. Then, for each line on stdin:
  sleep        emits PrepareForSleep(true)
  wake         emits PrepareForSleep(false)
  spoof-sleep  emits PrepareForSleep(true) from a second connection that does NOT own the name
               (a subscriber matching on the sender must ignore it)
and prints "sent COMMAND" once the message is handed to the bus. Exits at the end of stdin.
"""

import sys

import dbus
import dbus.bus
import dbus.lowlevel

NAME = "org.freedesktop.login1"
PATH = "/org/freedesktop/login1"
INTERFACE = "org.freedesktop.login1.Manager"


def prepare_for_sleep(connection, sleeping):
    message = dbus.lowlevel.SignalMessage(PATH, INTERFACE, "PrepareForSleep")
    message.append(dbus.Boolean(sleeping), signature="b")
    connection.send_message(message)
    connection.flush()


def main():
    if len(sys.argv) != 2:
        print("usage: login1-standin.py BUS_ADDRESS", file=sys.stderr)
        return 2
    address = sys.argv[1]
    login1 = dbus.bus.BusConnection(address)
    reply = login1.request_name(NAME, dbus.bus.NAME_FLAG_DO_NOT_QUEUE)
    if reply != dbus.bus.REQUEST_NAME_REPLY_PRIMARY_OWNER:
        print(f"could not own {NAME}: reply {reply}", file=sys.stderr)
        return 1
    impostor = None
    print("ready", flush=True)

    for line in sys.stdin:
        command = line.strip()
        if command == "sleep":
            prepare_for_sleep(login1, True)
        elif command == "wake":
            prepare_for_sleep(login1, False)
        elif command == "spoof-sleep":
            if impostor is None:
                impostor = dbus.bus.BusConnection(address)
            prepare_for_sleep(impostor, True)
        elif command == "":
            continue
        else:
            print(f"unknown command {command!r}", file=sys.stderr)
            return 2
        print(f"sent {command}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
