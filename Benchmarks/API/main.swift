import Foundation
import Hummingbird
import Logging
import ReachCore
import ReachMetrics
import ReachServer
import ReachSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

// api-benchmark: status-API fan-out latency and a server for wrk.
//
//   api-benchmark fanout-sse N REPS          N raw-socket SSE clients on a loopback StatusServer
//   api-benchmark fanout-inprocess N REPS    N monitor.subscribe() consumers
//   api-benchmark fanout-asyncstream N REPS  the same consumers of one AsyncStream each: the textbook hub
//   api-benchmark fanout-floor N REPS        the same consumers of bare continuations: the executor's floor
//   api-benchmark fanout-floor-cancellable N REPS  the same, each wait with a cancellation record
//   api-benchmark fanout-compare N REPS ROUNDS     the four above in one process, rounds interleaved,
//                                            with the ratios of the hub's p99 to each of the others
//   api-benchmark serve PORT                 a StatusServer on 127.0.0.1:PORT with three targets
//
// A transition is one `monitor.record` of a result that flips the only target's health (hysteresis
// 1/1), on a monitor with the system clock. Latency is from just before `record` (or the comparison's
// send) to the moment each client (or consumer) has parsed the event; figures are over every client
// and every transition.

let quiet = Logger(label: "api-benchmark") { _ in SwiftLogNoOpLogHandler() }

func loopbackTarget(_ name: String, port: Int) -> ProbeTarget {
    ProbeTarget(
        name: name,
        check: .http(
            HTTPCheck(url: "http://127.0.0.1:\(port)/health", endpoint: HostPort(host: "127.0.0.1", port: port))
        ),
        hysteresis: Hysteresis(failuresBeforeDown: 1, successesBeforeUp: 1)
    )
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

/// Median, p99 and max of some latencies.
struct Latencies {
    let count: Int
    let median: Duration
    let p99: Duration
    let max: Duration

    init?(_ samples: [Duration]) {
        let sorted = samples.sorted()
        guard let last = sorted.last else { return nil }
        func pick(_ q: Double) -> Duration { sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] }
        (count, median, p99, max) = (sorted.count, pick(0.5), pick(0.99), last)
    }
}

func ms(_ duration: Duration) -> String { String(format: "%.3f ms", Double(duration / .nanoseconds(1)) / 1e6) }

@discardableResult
func report(_ label: String, _ samples: [Duration], expected: Int) -> Latencies? {
    guard let latencies = Latencies(samples) else {
        print("\(label): no samples")
        return nil
    }
    print(
        "\(label): samples=\(latencies.count)/\(expected) median=\(ms(latencies.median)) p99=\(ms(latencies.p99)) max=\(ms(latencies.max))"
    )
    return latencies
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

/// User and system CPU time of the whole process.
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

final class Counter: Sendable {
    let value = Atomic<Int>(0)
}

/// What the fan-out consumers read: an event with its sequence number.
protocol Sequenced: Sendable { var sequence: UInt64 { get } }
extension ConnectivityEvent: Sequenced {}
extension UInt64: Sequenced { var sequence: UInt64 { self } }

/// The Swift executor's floor for the same fan-out: each consumer parks a bare continuation and
/// the sender resumes them all, in the order they parked. No buffering, nothing a subscription
/// needs but not missing a send that came before the consumer parked: what is left is the cost of
/// waking a task. `cancellable` adds the cancellation record
/// that any subscription a task can cancel has to install for each wait (the handler does nothing).
final class BareFanout: Sendable, AsyncSequence {
    private let state = Mutex<(sequence: UInt64, parked: [UnsafeContinuation<UInt64, Never>])>((1, []))
    let cancellable: Bool

    init(cancellable: Bool) { self.cancellable = cancellable }

    func send() -> UInt64 {
        let (sequence, parked) = state.withLock { state in
            state.sequence += 1
            var parked: [UnsafeContinuation<UInt64, Never>] = []
            parked.reserveCapacity(state.parked.count)
            swap(&parked, &state.parked)
            return (state.sequence, parked)
        }
        for waiter in parked { waiter.resume(returning: sequence) }
        return sequence
    }

    func makeAsyncIterator() -> Iterator { Iterator(fanout: self) }

    struct Iterator: AsyncIteratorProtocol {
        let fanout: BareFanout
        /// The last sequence number read: a consumer that was slow to park after it must not wait for the next.
        var seen: UInt64?

        mutating func next() async -> UInt64? {
            guard let seen else {
                let first = fanout.state.withLock { $0.sequence }
                seen = first
                return first
            }
            let next: UInt64
            if fanout.cancellable {
                next = await withTaskCancellationHandler {
                    await park(after: seen)
                } onCancel: {
                }
            } else {
                next = await park(after: seen)
            }
            self.seen = next
            return next
        }

        private func park(after seen: UInt64) async -> UInt64 {
            await withUnsafeContinuation { waiter in
                let latest: UInt64? = fanout.state.withLock { state in
                    guard state.sequence == seen else { return state.sequence }
                    state.parked.append(waiter)
                    return nil
                }
                if let latest { waiter.resume(returning: latest) }
            }
        }
    }
}

/// The textbook hub for comparison: one `AsyncStream` per subscriber, each yielded every event.
final class StreamPerSubscriber: Sendable {
    private let state = Mutex<(sequence: UInt64, continuations: [AsyncStream<UInt64>.Continuation])>((1, []))

    func subscribe() -> AsyncStream<UInt64> {
        let (stream, continuation) = AsyncStream.makeStream(of: UInt64.self, bufferingPolicy: .bufferingNewest(64))
        state.withLock { state in
            continuation.yield(state.sequence)
            state.continuations.append(continuation)
        }
        return stream
    }

    func send() -> UInt64 {
        let (sequence, continuations) = state.withLock { state in
            state.sequence += 1
            return (state.sequence, state.continuations)
        }
        for continuation in continuations { continuation.yield(sequence) }
        return sequence
    }
}

/// What one fan-out run measured: latency over every delivery, and the cost of the sends.
struct FanoutFigures {
    let latency: Latencies
    let sendMedian: Duration
    let cpuPerDelivery: Double
}

@discardableResult
func fanoutInProcess(clients: Int, reps: Int) async -> FanoutFigures? {
    let (monitor, _, runner) = makeMonitor([loopbackTarget("bench", port: 9)])
    defer { runner.cancel() }
    monitor.record(.success("bench", latency: .milliseconds(1)), epoch: monitor.probeEpoch)
    return await fanout(
        "fanout-inprocess",
        clients: clients,
        reps: reps,
        subscribe: { monitor.subscribe() },
        send: { rep in
            let sequence = monitor.current.sequence + 1
            monitor.record(flip(rep), epoch: monitor.probeEpoch)
            return sequence
        }
    )
}

@discardableResult
func fanoutFloor(clients: Int, reps: Int, cancellable: Bool) async -> FanoutFigures? {
    let bare = BareFanout(cancellable: cancellable)
    let label = cancellable ? "fanout-floor-cancellable" : "fanout-floor"
    return await fanout(label, clients: clients, reps: reps, subscribe: { bare }) { _ in bare.send() }
}

@discardableResult
func fanoutAsyncStream(clients: Int, reps: Int) async -> FanoutFigures? {
    let streams = StreamPerSubscriber()
    return await fanout("fanout-asyncstream", clients: clients, reps: reps, subscribe: { streams.subscribe() }) { _ in
        streams.send()
    }
}

/// Starts `clients` consumers of what `subscribe` returns, then sends `reps` events, one at a time,
/// each once every consumer has the previous one. Latency is from just before each `send` to each
/// consumer's receipt.
func fanout<Events: AsyncSequence & Sendable>(
    _ label: String,
    clients: Int,
    reps: Int,
    subscribe: () -> Events,
    send: (Int) -> UInt64
) async -> FanoutFigures? where Events.Element: Sequenced, Events.Failure == Never {
    let received = Counter()
    let consumers = (0..<clients).map { _ in
        let events = subscribe()
        return Task { () -> [(UInt64, ContinuousClock.Instant)] in
            var seen: [(UInt64, ContinuousClock.Instant)] = []
            seen.reserveCapacity(reps + 2)
            for await event in events {
                seen.append((event.sequence, .now))
                received.value.add(1, ordering: .relaxed)
                if seen.count == reps + 1 { break }
            }
            return seen
        }
    }
    // The current event comes first on each subscription.
    guard await waitUntil(.seconds(60), { received.value.load(ordering: .relaxed) >= clients }) else {
        print("\(label): consumers did not start")
        return nil
    }
    var started: [UInt64: ContinuousClock.Instant] = [:]
    var sendCost: [Duration] = []
    let cpuBefore = cpuSeconds()
    for rep in 0..<reps {
        let t0 = ContinuousClock.now
        let sequence = send(rep)
        sendCost.append(.now - t0)
        started[sequence] = t0
        if !(await waitUntil(.seconds(30), { received.value.load(ordering: .relaxed) >= clients * (rep + 2) })) {
            print("\(label): transition \(rep) did not reach every consumer")
            break
        }
        try? await Task.sleep(for: .milliseconds(5))
    }
    let cpuPerDelivery = (cpuSeconds() - cpuBefore) / Double(clients * reps)
    var samples: [Duration] = []
    for consumer in consumers {
        for (sequence, at) in await consumer.value {
            if let t0 = started[sequence] { samples.append(at - t0) }
        }
    }
    let latency = report("\(label) clients=\(clients) reps=\(reps)", samples, expected: clients * reps)
    // How much of that is the send itself (waking every consumer).
    let sends = report("  send itself", sendCost, expected: reps)
    print(
        String(
            format: "  CPU per delivery: %.2f µs (process CPU over the transitions, idle waits included)",
            cpuPerDelivery * 1e6
        )
    )
    guard let latency, let sends else { return nil }
    return FanoutFigures(latency: latency, sendMedian: sends.median, cpuPerDelivery: cpuPerDelivery)
}

/// The hub beside its references in one process, rounds interleaved (each round starts with the
/// next one in turn), so that every ratio compares runs under the same load. Prints each round's
/// figures and, per reference, the ratios of the hub's p99 and median to it: per round, and their
/// median over the rounds.
func fanoutCompare(clients: Int, reps: Int, rounds: Int) async {
    let modes: [(name: String, run: () async -> FanoutFigures?)] = [
        ("fanout-inprocess", { await fanoutInProcess(clients: clients, reps: reps) }),
        ("fanout-asyncstream", { await fanoutAsyncStream(clients: clients, reps: reps) }),
        ("fanout-floor", { await fanoutFloor(clients: clients, reps: reps, cancellable: false) }),
        ("fanout-floor-cancellable", { await fanoutFloor(clients: clients, reps: reps, cancellable: true) }),
    ]
    print("load average at start: \(loadAverage())")
    var figures: [String: [FanoutFigures]] = [:]
    for round in 0..<rounds {
        print("== round \(round + 1) of \(rounds)")
        for offset in modes.indices {
            let mode = modes[(round + offset) % modes.count]
            if let measured = await mode.run() { figures[mode.name, default: []].append(measured) }
        }
    }
    print("load average at end: \(loadAverage())")
    guard let hub = figures["fanout-inprocess"], hub.count == rounds else {
        print("fanout-compare: the hub did not finish every round")
        return
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    func milliseconds(_ duration: Duration) -> Double { Double(duration / .nanoseconds(1)) / 1e6 }
    for (name, _) in modes {
        guard let runs = figures[name], runs.count == rounds else { continue }
        let p99s = runs.map { milliseconds($0.latency.p99) }
        print(
            "RESULT \(name) clients=\(clients) reps=\(reps) rounds=\(rounds): "
                + String(
                    format:
                        "median %.2f ms, p99 %.2f ms (medians over the rounds), p99 %.2f–%.2f ms, CPU per delivery %.2f µs",
                    median(runs.map { milliseconds($0.latency.median) }),
                    median(p99s),
                    p99s.min()!,
                    p99s.max()!,
                    median(runs.map { $0.cpuPerDelivery }) * 1e6
                )
        )
    }
    for (name, _) in modes.dropFirst() {
        guard let runs = figures[name], runs.count == rounds else { continue }
        let p99 = zip(hub, runs).map { $0.latency.p99 / $1.latency.p99 }
        let medians = zip(hub, runs).map { $0.latency.median / $1.latency.median }
        // Beside the tail: another process's turn on a core delays a wake-up more than it adds to its cost.
        let cpu = zip(hub, runs).map { $0.cpuPerDelivery / $1.cpuPerDelivery }
        let perRound = p99.map { String(format: "%.2f", $0) }.joined(separator: " ")
        print(
            "RESULT ratio fanout-inprocess/\(name): "
                + String(
                    format: "p99 %.2f× (rounds: \(perRound)), median %.2f×, CPU per delivery %.2f×",
                    median(p99),
                    median(medians),
                    median(cpu)
                )
        )
    }
}

/// The 1, 5 and 15-minute load averages, as /proc/loadavg has them.
func loadAverage() -> String {
    guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "unknown" }
    return text.split(separator: " ").prefix(3).joined(separator: " ")
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
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length)
            return getsockname(fd, $0, &length)
        }
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
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
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
                let count = buffer.withUnsafeMutableBytes {
                    recv(polls[index].fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
                }
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
                        if let id = UInt64(String(decoding: bytes[(cursor + idPrefix.count)..<end], as: UTF8.self)) {
                            ids.append(id)
                        }
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
    let server = StatusServer(
        monitor: monitor,
        metrics: metrics,
        address: .tcp(host: "127.0.0.1", port: port),
        logger: quiet
    )
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
            print(
                "fanout-sse: transition \(rep) reached \(reader.received.load(ordering: .relaxed) - clients * (rep + 1)) of \(clients) clients"
            )
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
    let server = StatusServer(
        monitor: monitor,
        metrics: metrics,
        address: .tcp(host: "127.0.0.1", port: port),
        logger: quiet
    )
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
case ("fanout-floor", let numbers) where numbers.count == 2:
    await fanoutFloor(clients: numbers[0], reps: numbers[1], cancellable: false)
case ("fanout-floor-cancellable", let numbers) where numbers.count == 2:
    await fanoutFloor(clients: numbers[0], reps: numbers[1], cancellable: true)
case ("fanout-asyncstream", let numbers) where numbers.count == 2:
    await fanoutAsyncStream(clients: numbers[0], reps: numbers[1])
case ("fanout-compare", let numbers) where numbers.count == 3:
    await fanoutCompare(clients: numbers[0], reps: numbers[1], rounds: numbers[2])
case ("serve", let numbers) where numbers.count == 1:
    try await serve(port: numbers[0])
default:
    print(
        "usage: api-benchmark fanout-sse N REPS | fanout-inprocess N REPS | fanout-asyncstream N REPS | fanout-floor[-cancellable] N REPS | fanout-compare N REPS ROUNDS | serve PORT"
    )
    exit(2)
}
exit(0)
