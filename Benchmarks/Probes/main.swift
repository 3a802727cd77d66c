// probe-benchmark: the probe scheduler and probers on real local servers, printing figures.
//
//   probe-benchmark cost N SECONDS                 CPU-s per 1,000 probes, peak RSS, tick lag
//   probe-benchmark detection REPS                 healthy → refused / blackhole / restored, to the verdict
//   probe-benchmark grpc-watch REPS                a watched gRPC server SIGKILLed, to the verdict
//
// The HTTP target is Benchmarks/Harness/target_server.py and the gRPC server
// Benchmarks/Harness/grpc_health_server.py (needs grpcio-health-checking), both found from the
// repository root (the directory it is run from) or named by $TARGET_SERVER and $GRPC_HEALTH_SERVER.
// Times are CLOCK_MONOTONIC, the clock target_server.py stamps its mode switches with.
import CoreFoundation  // timespec and rusage as Foundation brings them in
import Foundation
import Logging
import ReachCore
import ReachLink
import ReachProbes
import ReachSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

let logger = Logger(label: "probe-benchmark") { _ in SwiftLogNoOpLogHandler() }
let clock = MonitorClock(ContinuousClock()) { WallTime(sinceEpoch: .seconds(Date().timeIntervalSince1970)) }

func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}

func peakRSSMiB() -> Double {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
    return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
}

func format(_ values: [Double], unit: String = "ms", scale: Double = 1000) -> String {
    String(
        format: "median %.1f %@, p99 %.1f %@, max %.1f %@ (n=%d)",
        percentile(values, 0.5) * scale,
        unit,
        percentile(values, 0.99) * scale,
        unit,
        (values.max() ?? .nan) * scale,
        unit,
        values.count
    )
}

/// A child process whose first stdout line is read back.
final class Child: @unchecked Sendable {
    let process = Process()
    let stdin = Pipe()
    let firstLine: String

    init(_ arguments: [String]) throws {
        let stdout = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        var line = Data()
        while true {
            let byte = stdout.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { break }
            line.append(byte)
        }
        firstLine = String(decoding: line, as: UTF8.self)
    }

    func send(_ line: String) { stdin.fileHandleForWriting.write(Data((line + "\n").utf8)) }
    func kill() {
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
    // SIGKILL: a child may inherit a mask that blocks SIGTERM.
    func stop() { kill() }
}

/// target_server.py, switched through its control port.
struct TargetServer {
    let child: Child
    let port: Int
    let controlPort: Int

    init() throws {
        let script = ProcessInfo.processInfo.environment["TARGET_SERVER"] ?? "Benchmarks/Harness/target_server.py"
        child = try Child(["python3", script, "--port", "0", "--control-port", "0", "--max-seconds", "3600"])
        let ports = try JSONSerialization.jsonObject(with: Data(child.firstLine.utf8)) as? [String: Any] ?? [:]
        port = ports["port"] as? Int ?? 0
        controlPort = ports["control_port"] as? Int ?? 0
    }

    var url: String { "http://127.0.0.1:\(port)/api/v1/health" }

    /// Switches the mode; returns the server's CLOCK_MONOTONIC at the switch.
    func switchTo(_ mode: String) throws -> Double {
        let answer =
            try JSONSerialization.jsonObject(with: Data(httpGet(port: controlPort, path: "/mode/\(mode)").utf8))
            as? [String: Any] ?? [:]
        return answer["t_switch"] as? Double ?? .nan
    }
}

/// A blocking `GET path` on 127.0.0.1, returning the body (Foundation on Linux fetches no http URLs).
func httpGet(port: Int, path: String) throws -> String {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
    let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
    _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
    var response: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count <= 0 { break }
        response += buffer[0..<count]
    }
    return String(decoding: response, as: UTF8.self).components(separatedBy: "\r\n\r\n").dropFirst().joined(
        separator: "\r\n\r\n"
    )
}

/// Records each probe's lateness and counts results.
final class Recorder: ProbeObserver {
    private let state = Mutex<(lateness: [Double], finished: Int, failed: Int, skipped: Int)>(([], 0, 0, 0))

    func probeStarted(_ target: ProbeTarget, lateness: Duration) {
        state.withLock {
            $0.lateness.append(Double(lateness.components.seconds) + Double(lateness.components.attoseconds) / 1e18)
        }
    }
    func probeSkipped(_ target: ProbeTarget) { state.withLock { $0.skipped += 1 } }
    func probeFinished(_ target: ProbeTarget, result: ProbeResult) {
        state.withLock {
            $0.finished += 1
            if !result.isSuccess { $0.failed += 1 }
        }
    }

    func reset() { state.withLock { $0 = ([], 0, 0, 0) } }
    var snapshot: (lateness: [Double], finished: Int, failed: Int, skipped: Int) { state.withLock { $0 } }
}

/// A monitor fed by the real netlink source, with a scheduler over `targets`.
final class Rig: Sendable {
    let monitor: ConnectivityMonitor
    let scheduler: ProbeScheduler
    let http: HTTPProber
    let recorder = Recorder()
    private let tasks: Mutex<[Task<Void, Never>]> = Mutex([])

    init(targets: [ProbeTarget]) {
        monitor = ConnectivityMonitor(
            configuration: .init(targets: targets, linkSettleWindow: .zero),
            clock: clock,
            logger: logger
        )
        http = HTTPProber(logger: logger)
        let prober = ProbeDispatcher(http: http, grpc: GRPCHealthProber(logger: logger))
        scheduler = ProbeScheduler(
            targets: targets,
            prober: prober,
            monitor: monitor,
            clock: clock,
            observer: recorder,
            timer: EventLoopProbeTimer()
        )
    }

    func start() {
        let (monitor, scheduler) = (monitor, scheduler)
        let source = NetlinkLinkSource(logger: logger)
        tasks.withLock {
            $0 = [
                Task { await monitor.run() },
                Task { try? await source.run(report: monitor.update(links:)) },
                Task { await scheduler.run() },
            ]
        }
    }

    func stop() async {
        for task in tasks.withLock({ $0 }) { task.cancel() }
        for task in tasks.withLock({ $0 }) { await task.value }
        await http.shutdown()
    }

    /// Waits for the verdict to satisfy `condition`; returns CLOCK_MONOTONIC when it did.
    func waitFor(_ condition: @escaping @Sendable (Verdict) -> Bool) async -> Double {
        for await event in monitor.subscribe() where condition(event.verdict) {
            return monotonicSeconds()
        }
        return .nan
    }
}

func cost(count: Int, seconds: Int) async throws {
    let server = try TargetServer()
    defer { server.child.stop() }
    let targets = (1...count).map { index in
        ProbeTarget(
            name: "t\(index)",
            check: .http(HTTPCheck(url: server.url, endpoint: HostPort(host: "127.0.0.1", port: server.port)))
        )
    }
    let rig = Rig(targets: targets)
    note("server on port \(server.port); starting \(count) targets")
    rig.start()
    try await Task.sleep(for: .seconds(3))
    note("warm; measuring \(seconds) s")
    rig.recorder.reset()
    let cpuBefore = cpuSeconds()
    let started = monotonicSeconds()
    try await Task.sleep(for: .seconds(seconds))
    let cpu = cpuSeconds() - cpuBefore
    let elapsed = monotonicSeconds() - started
    let figures = rig.recorder.snapshot
    note("measured; stopping")
    await rig.stop()
    print(
        String(
            format:
                "RESULT cost N=%d: %.0f probes/s, %.3f CPU-s per 1,000 probes, %.1f%% of one core, peak RSS %.1f MiB, failed %d, skipped %d",
            count,
            Double(figures.finished) / elapsed,
            cpu / Double(max(1, figures.finished)) * 1000,
            cpu / elapsed * 100,
            peakRSSMiB(),
            figures.failed,
            figures.skipped
        )
    )
    print("RESULT cost N=\(count): tick lag \(format(figures.lateness))")
}

func detection(reps: Int) async throws {
    let server = try TargetServer()
    defer { server.child.stop() }
    let target = ProbeTarget(
        name: "server",
        check: .http(HTTPCheck(url: server.url, endpoint: HostPort(host: "127.0.0.1", port: server.port)))
    )
    let rig = Rig(targets: [target])
    rig.start()
    _ = await rig.waitFor { $0.state == .connected }
    var refused: [Double] = []
    var blackhole: [Double] = []
    var restored: [Double] = []
    for rep in 0..<reps {
        for mode in ["stopped", "blackhole"] {
            try await Task.sleep(for: .milliseconds(1000 + Int.random(in: 0..<1000)))
            let down = Task { await rig.waitFor { $0.state == .disconnected } }
            try await Task.sleep(for: .milliseconds(5))
            let switched = try server.switchTo(mode)
            let detected = await down.value
            (mode == "stopped" ? { refused.append(detected - switched) } : { blackhole.append(detected - switched) })()
            try await Task.sleep(for: .milliseconds(Int.random(in: 0..<1000)))
            let up = Task { await rig.waitFor { $0.state == .connected } }
            try await Task.sleep(for: .milliseconds(5))
            let healthy = try server.switchTo("healthy")
            restored.append(await up.value - healthy)
        }
        FileHandle.standardError.write(Data("rep \(rep + 1)/\(reps)\n".utf8))
    }
    await rig.stop()
    print("RESULT detection refused: \(format(refused))")
    print("RESULT detection blackhole: \(format(blackhole))")
    print("RESULT restoration: \(format(restored))")
}

func grpcWatch(reps: Int) async throws {
    let script = ProcessInfo.processInfo.environment["GRPC_HEALTH_SERVER"] ?? "Benchmarks/Harness/grpc_health_server.py"
    var port = 0
    var latencies: [Double] = []
    for rep in 0..<reps {
        let server = try Child(["python3", script, "\(port)"])
        port = Int(server.firstLine) ?? 0
        let target = ProbeTarget(
            name: "grpc",
            check: .grpc(GRPCHealthCheck(endpoint: HostPort(host: "127.0.0.1", port: port), watch: true))
        )
        let rig = Rig(targets: [target])
        rig.start()
        _ = await rig.waitFor { $0.state == .connected }
        try await Task.sleep(for: .milliseconds(300 + Int.random(in: 0..<700)))
        let down = Task { await rig.waitFor { $0.state == .disconnected } }
        try await Task.sleep(for: .milliseconds(5))
        let killed = monotonicSeconds()
        server.kill()
        latencies.append(await down.value - killed)
        await rig.stop()
        FileHandle.standardError.write(
            Data("rep \(rep + 1)/\(reps): \(String(format: "%.1f", latencies.last! * 1000)) ms\n".utf8)
        )
    }
    print("RESULT grpc watch-mode death to verdict: \(format(latencies))")
}

func note(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

let arguments = CommandLine.arguments.dropFirst()
switch arguments.first {
case "cost":
    let count = Int(arguments.dropFirst().first ?? "") ?? 100
    let seconds = Int(arguments.dropFirst(2).first ?? "") ?? 20
    try await cost(count: count, seconds: seconds)
case "detection":
    try await detection(reps: Int(arguments.dropFirst().first ?? "") ?? 20)
case "grpc-watch":
    try await grpcWatch(reps: Int(arguments.dropFirst().first ?? "") ?? 20)
default:
    print("usage: probe-benchmark cost N SECONDS | detection REPS | grpc-watch REPS")
    exit(2)
}
