// link-flap-benchmark: how long from a link change to the adapter's report of it, to the hub
// yielding the new verdict, and (on restoration) to the immediate probe request.
//
// Creates a namespace with veth rd0/rd1, 198.51.100.2/24 on rd0 and a default route, runs the
// netlink adapter in it, and flaps rd0: first by spawning `ip` (as an administrator or a script
// would), then by sending RTM_NEWLINK/RTM_NEWROUTE itself (no process spawn in the measurement).
// Loss: `link set rd0 down` → the first snapshot whose LinkAssessment is not usable.
// Gain: `link set rd0 up` + default route re-added → the first usable snapshot.
//
// The adapter feeds a real ConnectivityMonitor (default 100 ms settle window for gains; losses
// count at once). A stand-in prober answers every immediate-probe request at once with a success,
// so each loss is a real connected → disconnected transition.
//
// Run as root, in release mode:
//   swift run -c release link-flap-benchmark [flaps] [settle-window-ms]

import CNetlink
import Dispatch
import Glibc
import Logging
import ReachCore
import ReachLink
import ReachSupport
import Synchronization

// MARK: Time

/// CLOCK_MONOTONIC in nanoseconds: the same clock on every thread.
func now() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}

// MARK: Checkpoints and recording

/// A place along the pipeline where a snapshot's verdict can be observed.
enum Checkpoint: String, CaseIterable {
    /// The adapter's `report` callback.
    case adapterReport = "adapter report"
    /// A hub subscriber receives the verdict: `disconnected` with a link reason, or (on a gain) the
    /// first verdict whose reason is no longer the link's.
    case hubYield = "hub yield"
    /// The probe control asks for an immediate probe (gains only: after the settle window).
    case probeRequested = "immediate probe requested"
}

/// Waits for the first observation of an expected verdict at every checkpoint.
final class LatencyRecorder: Sendable {
    private struct Armed {
        var usable: Bool
        var expected: [Checkpoint]
        var reachedAt: [Checkpoint: Int64] = [:]
    }

    private let armed = Mutex<Armed?>(nil)
    private let done = DispatchSemaphore(value: 0)

    /// Starts waiting for `usable` at `expected`; call before triggering the change.
    func arm(usable: Bool, expecting expected: [Checkpoint]) {
        armed.withLock { $0 = Armed(usable: usable, expected: expected) }
    }

    /// Called wherever a checkpoint sees a snapshot's verdict; cheap, any thread.
    func reached(_ checkpoint: Checkpoint, usable: Bool) {
        let time = now()
        let complete = armed.withLock { state -> Bool in
            guard var current = state, current.usable == usable, current.reachedAt[checkpoint] == nil else {
                return false
            }
            current.reachedAt[checkpoint] = time
            state = current
            return current.expected.allSatisfy { current.reachedAt[$0] != nil }
        }
        if complete { done.signal() }
    }

    /// The times each checkpoint was reached, or nil after `timeoutMilliseconds`.
    func wait(timeoutMilliseconds: Int = 3_000) -> [Checkpoint: Int64]? {
        let result = done.wait(timeout: .now() + .milliseconds(timeoutMilliseconds))
        return armed.withLock { state in
            defer { state = nil }
            return result == .success ? state?.reachedAt : nil
        }
    }
}

/// Latency samples (ns) per series name, printed as percentiles.
struct Samples {
    private(set) var series: [(name: String, values: [Int64])] = []
    var timeouts: [String: Int] = [:]

    mutating func add(_ name: String, _ value: Int64) {
        if let index = series.firstIndex(where: { $0.name == name }) {
            series[index].values.append(value)
        } else {
            series.append((name, [value]))
        }
    }

    func printTable(title: String) {
        print(title)
        print(
            "  " + "interval".padding(78) + "n".leftPadding(6) + "p50".leftPadding(9) + "p99".leftPadding(9)
                + "max".leftPadding(9)
        )
        for (name, values) in series {
            let sorted = values.sorted()
            func percentile(_ p: Double) -> Double {
                let rank = Int((p * Double(sorted.count - 1)).rounded(.up))
                return Double(sorted[min(max(rank, 0), sorted.count - 1)]) / 1e6
            }
            print(
                "  " + name.padding(78) + "\(sorted.count)".leftPadding(6)
                    + format(percentile(0.5)).leftPadding(9) + format(percentile(0.99)).leftPadding(9)
                    + format(Double(sorted.last ?? 0) / 1e6).leftPadding(9)
            )
        }
        for (name, count) in timeouts.sorted(by: { $0.key < $1.key }) where count > 0 {
            print("  \(name): \(count) flaps timed out (no report within 3 s)")
        }
    }

    private func format(_ milliseconds: Double) -> String {
        let hundredths = Int((milliseconds * 100).rounded())
        let sign = hundredths < 0 ? "-" : ""
        let magnitude = abs(hundredths)
        return "\(sign)\(magnitude / 100).\(magnitude % 100 < 10 ? "0" : "")\(magnitude % 100)"
    }
}

extension String {
    func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
    func leftPadding(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}

// MARK: Commands

struct Failure: Error, CustomStringConvertible {
    var description: String
}

let ipPath =
    ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first { (path: String) in access(path, X_OK) == 0 }
    ?? "/usr/sbin/ip"

/// posix_spawn + waitpid: the cheapest way to run `ip`, so the figures show the command, not the spawner.
/// Returns when the command has exited.
@discardableResult
func spawn(_ arguments: [String], check: Bool = true) throws -> Int32 {
    var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    let result = posix_spawn(&pid, arguments[0], &actions, nil, &argv, environ)
    guard result == 0 else { throw Failure(description: "posix_spawn \(arguments[0]): errno \(result)") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let exitCode = (status >> 8) & 0xFF
    if check, status & 0x7F != 0 || exitCode != 0 {
        throw Failure(description: "\(arguments.joined(separator: " ")) failed with status \(status)")
    }
    return exitCode
}

func ip(_ namespace: String, _ arguments: String...) throws {
    try spawn([ipPath, "-n", namespace] + arguments)
}

/// Issues link and route changes with its own rtnetlink socket, from a thread inside the namespace.
final class NetlinkCommander {
    private let descriptor: Int32
    private var sequence: UInt32 = 0
    let interfaceIndex: Int32

    /// Call on a thread that has entered the namespace.
    init(interface: String) throws {
        descriptor = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), NETLINK_ROUTE)
        guard descriptor >= 0 else { throw Failure(description: "socket(AF_NETLINK): errno \(errno)") }
        interfaceIndex = Int32(bitPattern: if_nametoindex(interface))
        guard interfaceIndex > 0 else { throw Failure(description: "no interface \(interface)") }
    }

    deinit { close(descriptor) }

    /// Sets rd0 up or down. `returned` is stamped right after the send() system call returns.
    func setLink(up: Bool) throws -> (before: Int64, returned: Int64) {
        var body: [UInt8] = [0, 0, 0, 0]  // family, pad, type
        body += bytes(interfaceIndex) + bytes(UInt32(up ? IFF_UP : 0)) + bytes(UInt32(IFF_UP))
        return try request(type: UInt16(RTM_NEWLINK), flags: 0, body: body)
    }

    /// Adds (or replaces) the default route via `gateway` through the interface.
    func addDefaultRoute(via gateway: [UInt8]) throws -> (before: Int64, returned: Int64) {
        // rtmsg: AF_INET, dst_len 0, src_len 0, tos 0, table main, RTPROT_BOOT, scope universe, unicast; flags 0
        var body: [UInt8] =
            [UInt8(AF_INET), 0, 0, 0, UInt8(RT_TABLE_MAIN.rawValue), 3, 0, UInt8(RTN_UNICAST)] + bytes(UInt32(0))
        body += attribute(UInt16(RTA_GATEWAY.rawValue), gateway)
        body += attribute(UInt16(RTA_OIF.rawValue), bytes(interfaceIndex))
        return try request(type: UInt16(RTM_NEWROUTE), flags: UInt16(NLM_F_CREATE | NLM_F_REPLACE), body: body)
    }

    private func request(type: UInt16, flags: UInt16, body: [UInt8]) throws -> (before: Int64, returned: Int64) {
        sequence += 1
        let message =
            bytes(UInt32(16 + body.count)) + bytes(type) + bytes(flags | UInt16(NLM_F_REQUEST | NLM_F_ACK))
            + bytes(sequence) + bytes(UInt32(0)) + body
        let before = now()
        let sent = message.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
        let after = now()
        guard sent == message.count else { throw Failure(description: "send: errno \(errno)") }
        // The kernel applied the change inside send(); read its acknowledgement (untimed).
        var reply = [UInt8](repeating: 0, count: 4096)
        let received = reply.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        guard received >= 20 else { throw Failure(description: "no acknowledgement") }
        let code = reply.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 16, as: Int32.self) }
        guard code == 0 else { throw Failure(description: "rtnetlink request failed: errno \(-code)") }
        return (before, after)
    }

    private func bytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }

    private func attribute(_ type: UInt16, _ payload: [UInt8]) -> [UInt8] {
        var result = bytes(UInt16(4 + payload.count)) + bytes(type) + payload
        while result.count % 4 != 0 { result.append(0) }
        return result
    }
}

// MARK: The run

let flaps = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 200
let warmUp = 5
let settleWindowMilliseconds = CommandLine.arguments.dropFirst(2).first.flatMap { Int($0) } ?? 100
let namespace = "rdbench-\(getpid())"
let filter = InterfaceFilter(include: ["rd0"], exclude: [])
let recorder = LatencyRecorder()

/// Runs the flaps on a thread of its own (it blocks), inside the namespace for the netlink variant.
func runFlaps() throws -> (loss: Samples, gain: Samples) {
    var loss = Samples()
    var gain = Samples()

    func measure(
        into samples: inout Samples,
        label: String,
        usable: Bool,
        counted: Bool,
        _ trigger: () throws -> (before: Int64, returned: Int64)
    ) throws {
        recorder.arm(
            usable: usable,
            expecting: usable ? [.adapterReport, .hubYield, .probeRequested] : [.adapterReport, .hubYield]
        )
        let (before, returned) = try trigger()
        guard let reached = recorder.wait() else {
            if counted { samples.timeouts[label, default: 0] += 1 }
            return
        }
        guard counted else { return }
        for checkpoint in Checkpoint.allCases {
            guard let time = reached[checkpoint] else { continue }
            samples.add("\(label) started → \(checkpoint.rawValue)", time - before)
            samples.add("\(label) returned → \(checkpoint.rawValue)", time - returned)
        }
    }

    // Variant 1: spawn `ip`.
    for flap in 0..<(warmUp + flaps) {
        let counted = flap >= warmUp
        try measure(into: &loss, label: "ip link set rd0 down", usable: false, counted: counted) {
            let before = now()
            try ip(namespace, "link", "set", "rd0", "down")
            return (before, now())
        }
        try measure(
            into: &gain,
            label: "ip route replace default (after ip link set up)",
            usable: true,
            counted: counted
        ) {
            try ip(namespace, "link", "set", "rd0", "up")
            let before = now()
            try ip(namespace, "route", "replace", "default", "via", "198.51.100.1", "dev", "rd0")
            return (before, now())
        }
    }

    // Variant 2: rtnetlink requests from this thread, moved into the namespace.
    let descriptor = open("/run/netns/\(namespace)", O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0, cnetlink_enter_network_namespace(descriptor) == 0 else {
        throw Failure(description: "cannot enter namespace \(namespace)")
    }
    close(descriptor)
    let commander = try NetlinkCommander(interface: "rd0")
    for flap in 0..<(warmUp + flaps) {
        let counted = flap >= warmUp
        try measure(into: &loss, label: "RTM_NEWLINK down, own socket", usable: false, counted: counted) {
            try commander.setLink(up: false)
        }
        try measure(
            into: &gain,
            label: "RTM_NEWROUTE (after RTM_NEWLINK up), own socket",
            usable: true,
            counted: counted
        ) {
            _ = try commander.setLink(up: true)
            return try commander.addDefaultRoute(via: [198, 51, 100, 1])
        }
    }
    return (loss, gain)
}

func main() async throws {
    guard geteuid() == 0 else { throw Failure(description: "run as root: the benchmark creates a network namespace") }
    try spawn([ipPath, "netns", "add", namespace])
    defer { _ = try? spawn([ipPath, "netns", "del", namespace], check: false) }
    try ip(namespace, "link", "set", "lo", "up")
    try ip(namespace, "link", "add", "rd0", "type", "veth", "peer", "name", "rd1")
    try ip(namespace, "link", "set", "rd1", "up")
    try ip(namespace, "link", "set", "rd0", "up")
    try ip(namespace, "addr", "add", "198.51.100.2/24", "dev", "rd0")
    try ip(namespace, "route", "add", "default", "via", "198.51.100.1", "dev", "rd0")

    var logger = Logger(label: "link-flap-benchmark")
    logger.logLevel = .warning
    let source = NetlinkLinkSource(logger: logger, networkNamespacePath: "/run/netns/\(namespace)")
    let target = ProbeTarget(name: "server", check: .tcp(HostPort(host: "203.0.113.10", port: 443)))
    let monitor = ConnectivityMonitor(
        configuration: .init(
            targets: [target],
            interfaceFilter: filter,
            linkSettleWindow: .milliseconds(settleWindowMilliseconds)
        ),
        clock: MonitorClock(ContinuousClock()) { WallTime(sinceEpoch: .nanoseconds(now())) },
        logger: logger
    )
    let linkReasons: [VerdictReason] = [.noLink, .noAddress, .noRoute]
    let initial = LatencyRecorder()
    initial.arm(usable: true, expecting: [.hubYield])
    let pipeline = Task {
        await withDiscardingTaskGroup { group in
            group.addTask { await monitor.run() }
            group.addTask {
                for await event in monitor.subscribe() {
                    let usable = !linkReasons.contains(event.verdict.reason)
                    recorder.reached(.hubYield, usable: usable)
                    if event.verdict.state == .connected { initial.reached(.hubYield, usable: true) }
                }
            }
            group.addTask {
                // The stand-in prober: every request is answered at once, successfully.
                var seen: UInt64 = 0
                for await control in monitor.probeControl()
                where !control.isSuspended && control.immediateProbeRequests > seen {
                    seen = control.immediateProbeRequests
                    recorder.reached(.probeRequested, usable: true)
                    monitor.record(.success("server", latency: .microseconds(100)), epoch: monitor.probeEpoch)
                }
            }
            group.addTask {
                try? await source.run { snapshot in
                    recorder.reached(.adapterReport, usable: LinkAssessment(snapshot, filter: filter).isUsable)
                    monitor.update(links: snapshot)
                }
            }
        }
    }
    guard initial.wait(timeoutMilliseconds: 5_000) != nil else {
        throw Failure(description: "the monitor never reported connected")
    }

    let started = now()
    let result: Result<(loss: Samples, gain: Samples), any Error> = await withCheckedContinuation { continuation in
        Thread.detach { continuation.resume(returning: Result { try runFlaps() }) }
    }
    let elapsed = Double(now() - started) / 1e9
    pipeline.cancel()
    await pipeline.value
    let (loss, gain) = try result.get()

    var system = utsname()
    uname(&system)
    let kernel = withUnsafeBytes(of: &system.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    print(
        "link-flap-benchmark: \(flaps) flaps per variant (+\(warmUp) warm-up) of veth rd0, Linux \(kernel), \(sysconf(Int32(_SC_NPROCESSORS_ONLN))) cores, \(formatSeconds(elapsed)) s"
    )
    print("Latencies in ms. 'started' is stamped just before spawning ip or calling send(); 'returned' just after")
    print("ip exits or send() returns (negative: the report came before ip exited). Overruns: \(source.overrunCount).")
    print("Settle window for gains: \(settleWindowMilliseconds) ms (losses are never delayed).")
    print()
    loss.printTable(title: "Loss: rd0 down → first snapshot whose LinkAssessment is not usable")
    print()
    gain.printTable(
        title:
            "Gain: rd0 up, default route re-added → usable snapshot, verdict, probe request (timed from the route change)"
    )
}

func formatSeconds(_ seconds: Double) -> String { "\(Int(seconds * 10) / 10).\(Int(seconds * 10) % 10)" }

/// A detached POSIX thread for blocking work.
enum Thread {
    private final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    static func detach(_ run: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Body(run)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(
            &thread,
            nil,
            { context in
                guard let context else { return nil }
                Unmanaged<Body>.fromOpaque(context).takeRetainedValue().run()
                return nil
            },
            context
        )
        if created == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<Body>.fromOpaque(context).release()
            run()
        }
    }
}

do {
    try await main()
} catch {
    print("link-flap-benchmark failed: \(error)")
    exit(1)
}
