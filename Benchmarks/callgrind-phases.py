#!/usr/bin/env python3
"""Where reachd's instructions per probe go, phase by phase, from a callgrind file of
Benchmarks/probe-instructions (KEEP=DIR keeps them).

  callgrind-phases.py FILE PROBES        # e.g. DIR/reachd.out.1 and the probes of its RESULT line

A phase is a set of entry functions (PHASES below, matched in Swift's mangled names). A phase's
cost is what its entry functions cost inclusively, less what flows from them into another phase's
entry: a decoded answer settles the probe, and settling closes the channel and records the result,
so `read` stops where `result` and `close` begin. Callgrind keeps the inclusive cost of every
caller-callee arc but not whole call paths, so below an arc the share that reaches another entry
is taken in proportion (a helper called from two phases splits as its arcs do). What no entry
reaches on the event loop's thread (epoll, its timers and task queue) is `loop`; what runs on other
threads is `elsewhere`, which should be next to nothing once start-up is over.
"""
import re
import sys
from collections import defaultdict

# In the order a probe meets them; an entry is a substring of a mangled name.
PHASES = [
    ("schedule", "the tick, the scheduler picking due probes, the prober's start", [
        "EventLoopProbeTimerV4Tick", "HTTPProberC5start_8whenDone", "TCPProberV5start_8whenDone"]),
    ("connect", "socket, options, pipeline, register, connect; the connect's completion", [
        "HTTPExchangeC5startyyF", "TCPProberV5start", "ProbeConnectorC", "BaseSocketChannelC13finishConnect"]),
    ("write", "the request written", ["HTTPExchangeC9connected", "HTTPExchangeC11sendRequest"]),
    ("read", "the answer read (HTTPResponseReader) and judged", ["BaseSocketChannelC9readable0"]),
    ("result", "the result recorded: monitor, verdict, metrics, observers", [
        "ProbeSchedulerC6launch33_BF805BE0396552013F31E0DC3791D17FLLyyAA0C8ScheduleV5StartVFyAA0C6ResultVYbcfU0_"]),
    ("close", "the channel closed (SO_LINGER reset), deregistered, handlers removed and freed", [
        "ChannelPCoreAAE5close4mode7promise", "7NIOCore7ChannelPAAE5close4mode7promise", "ChannelPipelineC14removeHandlers",
        "SocketChannelCfD", "BaseSocketChannelC6close0"]),
]
# The event loop thread's body: everything a probe does runs under it.
PUBLISH = "EventHubC7publish"  # the hub's publish: one verdict event
LOOP = "$s8NIOPosix19SelectableEventLoopC3runyyKF"


def parse(path):
    """Self cost per function, inclusive cost per caller->callee arc, and calls per callee."""
    names = {}
    self_cost = defaultdict(int)
    arcs = defaultdict(int)  # (caller, callee) -> inclusive instructions
    calls = defaultdict(int)
    function = callee = None
    pending_call = False

    def name(value):
        found = re.match(r"\((\d+)\)(?: (.*))?", value)
        if not found:
            return value
        if found.group(2) is not None:
            names[found.group(1)] = found.group(2)
        return names[found.group(1)]

    with open(path) as lines:
        for line in lines:
            line = line.rstrip("\n")
            if line.startswith("fn="):
                function = name(line[3:])
            elif line.startswith("cfn="):
                callee = name(line[4:])
            elif line.startswith("calls="):
                pending_call = True
                calls[callee] += int(line[6:].split()[0])
            elif line and (line[0].isdigit() or line[0] in "+-*"):
                cost = int(line.split()[-1]) if len(line.split()) > 1 else 0
                if pending_call:
                    arcs[(function, callee)] += cost
                    pending_call = False
                else:
                    self_cost[function] += cost
    return self_cost, arcs, calls


def main():
    path, probes = sys.argv[1], int(sys.argv[2])
    self_cost, arcs, calls = parse(path)
    callees = defaultdict(list)
    for (caller, callee), cost in arcs.items():
        if caller != callee:
            callees[caller].append((callee, cost))
    inclusive = {f: self_cost.get(f, 0) + sum(c for _, c in callees.get(f, [])) for f in set(self_cost) | set(callees)}
    phase_of = {}
    for function in inclusive:
        for phase, _, entries in PHASES:
            if any(entry in function for entry in entries):
                phase_of[function] = phase
                break

    # The share of a function's inclusive cost that reaches another entry, by phase.
    memo = {}

    def onward(function, visiting=frozenset()):
        if function in memo:
            return memo[function]
        if function in visiting:
            return {}
        flows = defaultdict(float)
        for callee, cost in callees.get(function, []):
            if callee in phase_of:
                flows[callee] += cost
            elif inclusive.get(callee):
                for entry, share in onward(callee, visiting | {function}).items():
                    flows[entry] += cost * share / inclusive[callee]
        memo[function] = flows
        return flows

    # Each entry keeps what does not flow on to another entry; what flows on is that entry's.
    own = {f: inclusive[f] - sum(onward(f).values()) for f in phase_of}
    totals = defaultdict(float)
    for function, phase in phase_of.items():
        totals[phase] += own[function]
    total = sum(self_cost.values())
    on_loop = inclusive.get(LOOP, 0)
    totals["loop"] = on_loop - sum(totals.values())
    totals["elsewhere"] = total - on_loop
    print(f"RESULT probe-phases: probes={probes} instructions_per_probe={total // probes}")
    for phase, words, _ in PHASES + [
        ("loop", "the event loop itself: epoll, timers, its task queue", []),
        ("elsewhere", "other threads (start-up still running, the HTTP server, libdispatch)", []),
    ]:
        print(f"RESULT probe-phases {phase}: {totals[phase] / probes / 1000:.1f}k per probe "
              f"({100 * totals[phase] / total:.0f} %): {words}")
    # News costs more than a probe that changes nothing (each event carries every target): a run
    # whose targets change health or quality in the window counts that too.
    events = sum(count for function, count in calls.items() if PUBLISH in function)
    print(f"RESULT probe-phases events: {events} verdict events published in the window")


if __name__ == "__main__":
    main()
