import Foundation
import Hummingbird
import Logging
import ReachCore
import ReachServer
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// api-benchmark: status-API fan-out latency and a server for wrk.
//
//   api-benchmark fanout-sse N REPS        N raw-socket SSE clients on a loopback StatusServer
//   api-benchmark fanout-inprocess N REPS  N monitor.subscribe() consumers
//   api-benchmark serve PORT               a StatusServer on 127.0.0.1:PORT with three targets
//
// A transition is one `monitor.record` of a result that flips the only target's health (hysteresis
// 1/1), on a monitor with the system clock. Latency is from just before `record` to the moment each
// client (or consumer) has parsed the event; figures are over every client and every transition.

let quiet = Logger(label: "api-benchmark") { _ in SwiftLogNoOpLogHandler() }

func loopbackTarget(_ name: String, port: Int) -> ProbeTarget {
    ProbeTarget(
        name: name,
        check: .http(HTTPCheck(url: "http://127.0.0.1:\(port)/health", endpoint: HostPort(host: "127.0.0.1", port: port))),
        hysteresis: Hysteresis(failuresBeforeDown: 1, successesBeforeUp: 1))
}

func makeMonitor(_ targets: [ProbeTarget]) -> (ConnectivityMonitor, ReachMetrics, Task<Void, Never>) {
    var configuration = ConnectivityMonitor.Configuration(targets: targets)
    configuration.subscriberBufferLimit = 64
    let clock = MonitorClock(ContinuousClock()) { WallTime(sinceEpoch: .seconds(Date().timeIntervalSince1970)) }
    let monitor = ConnectivityMonitor(configuration: configuration, clock: clock, logger: quiet)
    let runner = Task { await monitor.run() }
    return (monitor, ReachMetrics(targets: targets), runner)
}

/// The n-th result for the benchmark target: alternately a failure and a success, so each is a transition.
func flip(_ index: Int) -> ProbeResult {
    index % 2 == 0
        ? .failure("bench", .connectionRefused, phase: .connect, latency: .milliseconds(1))
        : .success("bench", latency: .milliseconds(2))
}

func report(_ label: String, _ samples: [Duration], expected: Int) {
    let sorted = samples.sorted()
    guard !sorted.isEmpty else {
        print("\(label): no samples")
        return
    }
    func pick(_ q: Double) -> Duration { sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] }
    func ms(_ d: Duration) -> String { String(format: "%.3f ms", Double(d / .nanoseconds(1)) / 1e6) }
    print("\(label): samples=\(sorted.count)/\(expected) median=\(ms(pick(0.5))) p99=\(ms(pick(0.99))) max=\(ms(sorted.last!))")
}

func waitUntil(_ timeout: Duration, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .microseconds(200))
    }
    return true
}

// MARK: in-process fan-out

final class Counter: Sendable {
    let value = Atomic<Int>(0)
}

func fanoutInProcess(clients: Int, reps: Int) async {
    let (monitor, _, runner) = makeMonitor([loopbackTarget("bench", port: 9)])
    monitor.record(.success("bench", latency: .milliseconds(1)), epoch: monitor.probeEpoch)
    let received = Counter()
    let consumers = (0..<clients).map { _ in
        let stream = monitor.subscribe()
        return Task { () -> [(UInt64, ContinuousClock.Instant)] in
            var seen: [(UInt64, ContinuousClock.Instant)] = []
            seen.reserveCapacity(reps + 2)
            for await event in stream {
                seen.append((event.sequence, .now))
                received.value.add(1, ordering: .relaxed)
                if seen.count == reps + 1 { break }
            }
            return seen
        }
    }
    // The current verdict comes first on each subscription.
    guard await waitUntil(.seconds(60), { received.value.load(ordering: .relaxed) >= clients }) else {
        print("fanout-inprocess: consumers did not start")
        return
    }
    var started: [UInt64: ContinuousClock.Instant] = [:]
    var recordCost: [Duration] = []
    for rep in 0..<reps {
        let before = monitor.current.sequence
        let t0 = ContinuousClock.now
        monitor.record(flip(rep), epoch: monitor.probeEpoch)
        recordCost.append(.now - t0)
        started[before + 1] = t0
        if !(await waitUntil(.seconds(30), { received.value.load(ordering: .relaxed) >= clients * (rep + 2) })) {
            print("fanout-inprocess: transition \(rep) did not reach every consumer")
            break
        }
        try? await Task.sleep(for: .milliseconds(5))
    }
    var samples: [Duration] = []
    for consumer in consumers {
        for (sequence, at) in await consumer.value {
            if let t0 = started[sequence] { samples.append(at - t0) }
        }
    }
    report("fanout-inprocess clients=\(clients) reps=\(reps)", samples, expected: clients * reps)
    // How much of that is the publish itself (monitor.record yielding to every subscription).
    report("  monitor.record() call itself", recordCost, expected: reps)
    runner.cancel()
}

// MARK: SSE fan-out over loopback

func freePort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length); return getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

func connectLoopback(port: Int) -> Int32? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard result == 0 else {
        close(fd)
        return nil
    }
    return fd
}

/// Reads every client socket on one thread with poll(2) and notes when each event id arrives.
final class SSEReader: Sendable {
    let received = Atomic<Int>(0)
    private let arrivals = Mutex<[UInt64: [ContinuousClock.Instant]]>([:])
    private let stop = Atomic<Bool>(false)
    private let fds: [Int32]

    init(fds: [Int32]) { self.fds = fds }

    func start() {
        let thread = Thread { self.loop() }
        thread.stackSize = 1 << 20
        thread.start()
    }

    func finish() { stop.store(true, ordering: .relaxed) }
    var all: [UInt64: [ContinuousClock.Instant]] { arrivals.withLock { $0 } }

    private func loop() {
        var polls = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        var pending = [[UInt8]](repeating: [], count: fds.count)
        var buffer = [UInt8](repeating: 0, count: 65536)
        let idPrefix = Array("\nid: ".utf8)
        while !stop.load(ordering: .relaxed) {
            let ready = poll(&polls, nfds_t(polls.count), 100)
            guard ready > 0 else { continue }
            let now = ContinuousClock.now
            for index in polls.indices where polls[index].revents != 0 {
                polls[index].revents = 0
                let count = buffer.withUnsafeMutableBytes { recv(polls[index].fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                guard count > 0 else {
                    if count == 0 { polls[index].fd = -1 }
                    continue
                }
                pending[index].append(contentsOf: buffer[0..<count])
                // Each complete "\nid: N\n" is one event (the first follows the response head's blank line).
                var ids: [UInt64] = []
                var consumed = 0
                var cursor = 0
                let bytes = pending[index]
                while cursor + idPrefix.count < bytes.count {
                    if bytes[cursor] == idPrefix[0], Array(bytes[cursor..<(cursor + idPrefix.count)]) == idPrefix {
                        var end = cursor + idPrefix.count
                        while end < bytes.count, bytes[end] != UInt8(ascii: "\n") { end += 1 }
                        guard end < bytes.count else { break }
                        if let id = UInt64(String(decoding: bytes[(cursor + idPrefix.count)..<end], as: UTF8.self)) { ids.append(id) }
                        cursor = end
                        consumed = end
                    } else {
                        cursor += 1
                    }
                }
                if consumed > 0 { pending[index].removeFirst(consumed) }
                if pending[index].count > 1 << 16 { pending[index].removeFirst(pending[index].count - 64) }
                if !ids.isEmpty {
                    arrivals.withLock { arrivals in
                        for id in ids { arrivals[id, default: []].append(now) }
                    }
                    received.add(ids.count, ordering: .relaxed)
                }
            }
        }
    }
}

func fanoutSSE(clients: Int, reps: Int) async throws {
    signal(SIGPIPE, SIG_IGN)
    let (monitor, metrics, runner) = makeMonitor([loopbackTarget("bench", port: 9)])
    monitor.record(.success("bench", latency: .milliseconds(1)), epoch: monitor.probeEpoch)
    let port = freePort()
    let server = StatusServer(monitor: monitor, metrics: metrics, address: .tcp(host: "127.0.0.1", port: port), logger: quiet)
    let app = server.makeApplication()
    let serving = Task { try await app.run() }
    var up = false
    for _ in 0..<200 {
        if let fd = connectLoopback(port: port) {
            close(fd)
            up = true
            break
        }
        try await Task.sleep(for: .milliseconds(25))
    }
    guard up else {
        print("fanout-sse: server did not start")
        return
    }
    var fds: [Int32] = []
    let request = Array("GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".utf8)
    for _ in 0..<clients {
        guard let fd = connectLoopback(port: port) else {
            print("fanout-sse: connect failed after \(fds.count) clients (errno \(errno))")
            return
        }
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        fds.append(fd)
    }
    let reader = SSEReader(fds: fds)
    reader.start()
    guard await waitUntil(.seconds(60), { reader.received.load(ordering: .relaxed) >= clients }) else {
        print("fanout-sse: only \(reader.received.load(ordering: .relaxed)) of \(clients) streams started")
        return
    }
    var started: [UInt64: ContinuousClock.Instant] = [:]
    for rep in 0..<reps {
        let before = monitor.current.sequence
        let t0 = ContinuousClock.now
        monitor.record(flip(rep), epoch: monitor.probeEpoch)
        started[before + 1] = t0
        if !(await waitUntil(.seconds(30), { reader.received.load(ordering: .relaxed) >= clients * (rep + 2) })) {
            print("fanout-sse: transition \(rep) reached \(reader.received.load(ordering: .relaxed) - clients * (rep + 1)) of \(clients) clients")
            break
        }
        try? await Task.sleep(for: .milliseconds(20))
    }
    reader.finish()
    var samples: [Duration] = []
    for (sequence, instants) in reader.all {
        if let t0 = started[sequence] { samples.append(contentsOf: instants.map { $0 - t0 }) }
    }
    report("fanout-sse clients=\(clients) reps=\(reps)", samples, expected: clients * reps)
    for fd in fds { close(fd) }
    serving.cancel()
    runner.cancel()
}

// MARK: serve

func serve(port: Int) async throws {
    let targets = [loopbackTarget("api", port: 9), loopbackTarget("auth", port: 10), loopbackTarget("cdn", port: 11)]
    let (monitor, metrics, runner) = makeMonitor(targets)
    for target in targets {
        let result = ProbeResult.success(target.name, latency: .milliseconds(12))
        monitor.record(result, epoch: monitor.probeEpoch)
        metrics.probeFinished(target, result: result)
    }
    let server = StatusServer(monitor: monitor, metrics: metrics, address: .tcp(host: "127.0.0.1", port: port), logger: quiet)
    print("serving on 127.0.0.1:\(port)")
    try await server.makeApplication().run()
    runner.cancel()
}

let arguments = CommandLine.arguments.dropFirst()
switch (arguments.first, arguments.dropFirst().compactMap { Int($0) }) {
case ("fanout-sse", let numbers) where numbers.count == 2:
    try await fanoutSSE(clients: numbers[0], reps: numbers[1])
case ("fanout-inprocess", let numbers) where numbers.count == 2:
    await fanoutInProcess(clients: numbers[0], reps: numbers[1])
case ("serve", let numbers) where numbers.count == 1:
    try await serve(port: numbers[0])
default:
    print("usage: api-benchmark fanout-sse N REPS | fanout-inprocess N REPS | serve PORT")
    exit(2)
}
exit(0)
