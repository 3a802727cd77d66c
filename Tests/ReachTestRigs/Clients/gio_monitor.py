"""A GLib program as GNOME Software, Evolution or Geary is one, through GObject introspection:
Gio.NetworkMonitor.get_default(), whatever backend GLib picks (GIO_EXTRA_MODULES adds reachd's).

Prints one JSON line per thing it sees: "init" (how long get_default() took), "start" (the
backend's type name and its state), "changed" for every network-changed signal (the state read in
the handler), and "reach" for every "reach HOST PORT" line on stdin (can_reach_async, and the
blocking can_reach too). Exits when stdin closes.
"""
import json
import os
import sys
import time

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402


def say(event, **fields):
    print(json.dumps(dict(event=event, **fields)), flush=True)


def state(monitor):
    return dict(
        type=type(monitor).__gtype__.name,
        connectivity=int(monitor.get_connectivity()),
        available=monitor.get_network_available(),
        metered=monitor.get_network_metered(),
    )


started = time.monotonic()
monitor = Gio.NetworkMonitor.get_default()
say("init", seconds=time.monotonic() - started)
say("start", **state(monitor))
monitor.connect("network-changed", lambda m, available: say("changed", signalled=available, **state(m)))


def reach(host, port):
    address = Gio.NetworkAddress.new(host, port)
    try:
        blocking = monitor.can_reach(address, None)
        blocking_error = None
    except GLib.Error as error:
        blocking, blocking_error = False, error.message

    def done(source, result):
        try:
            reachable, error = source.can_reach_finish(result), None
        except GLib.Error as failure:
            reachable, error = False, dict(code=failure.code, message=failure.message)
        say("reach", address=f"{host}:{port}", reachable=reachable, error=error,
            blocking=blocking, blocking_error=blocking_error)

    monitor.can_reach_async(address, None, done)


pending = b""


def on_input(fd, condition):
    # Read what is there, not a line: Python's buffered readline would keep lines from the watch.
    global pending
    data = os.read(fd, 4096)
    if not data:
        loop.quit()
        return False
    pending += data
    *lines, pending = pending.split(b"\n")
    for line in lines:
        words = line.decode().split()
        if len(words) == 3 and words[0] == "reach":
            reach(words[1], int(words[2]))
    return True


loop = GLib.MainLoop()
GLib.io_add_watch(sys.stdin.fileno(), GLib.PRIORITY_DEFAULT, GLib.IO_IN | GLib.IO_HUP, on_input)
loop.run()
