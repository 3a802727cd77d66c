import Foundation
import ReachTesting
import Synchronization

/// One verdict as a subscriber of `/v1/events` received it.
struct ObservedVerdict: Sendable {
    var at: ContinuousClock.Instant
    var sequence: UInt64
    var state: String
    var reason: String
    var reset: Bool
    /// The captive portal's sign-in URL and evidence, when the verdict names a portal.
    var portalURL: String? = nil
    var portalEvidence: String? = nil
    /// Where the path breaks (`fault`), when disconnected.
    var fault: String? = nil
    /// The failing target (`target`).
    var target: String? = nil
    /// Each uplink's reachability (`interfaces`), as `ua=false ub=true`.
    var interfaces: String = ""
    /// The verdict's quality (`quality`); `nil` when none.
    var observedQuality: ObservedQuality? = nil

    /// The verdict's quality as `impaired fault=server target=api latency=0.412,loss=0.1`; `nil` when none.
    var quality: String? { observedQuality?.summary }

    var summary: String { "\(state)/\(reason)" }
    /// Its fault with the reason that named it, as `server (tls_failure of tls)`: what a failure
    /// message needs to tell which evidence moved the fault.
    var faultAndReason: String {
        "\(fault ?? "none") (\(reason)\(target.map { " of \($0)" } ?? ""))"
    }
    /// Everything a program is told of where the path breaks and how well it works (but the
    /// measured values): compared between reachd and the embedded service.
    var told: String {
        "\(state)/\(reason) fault=\(fault ?? "none") target=\(target ?? "none") portal=\(portalEvidence ?? "none") \(portalURL ?? "") [\(interfaces)] quality=\(observedQuality?.told ?? "none")"
    }
}

/// A verdict's quality as the status document carries it.
struct ObservedQuality: Sendable, Equatable {
    /// One measure past its budget.
    struct Finding: Sendable, Equatable {
        var measure: String
        var value: Double
        var budget: Double
    }

    var state: String
    var fault: String?
    var target: String?
    var exceeded: [Finding]

    init(_ object: [String: Any]) {
        state = object["state"] as? String ?? "?"
        fault = object["fault"] as? String
        target = object["target"] as? String
        exceeded = (object["exceeded"] as? [[String: Any]] ?? []).map {
            Finding(
                measure: $0["measure"] as? String ?? "?",
                value: ($0["value"] as? NSNumber)?.doubleValue ?? .nan,
                budget: ($0["budget"] as? NSNumber)?.doubleValue ?? .nan
            )
        }
    }

    /// `impaired fault=server target=api latency=0.412,loss=0.1`.
    var summary: String {
        "\(state) fault=\(fault ?? "none") target=\(target ?? "none") \(exceeded.map { "\($0.measure)=\($0.value)" }.joined(separator: ","))"
    }

    /// Everything but the measured values, which two observers of one line measure apart:
    /// `impaired fault=server target=api latency>0.3`.
    var told: String {
        "\(state) fault=\(fault ?? "none") target=\(target ?? "none") \(exceeded.map { "\($0.measure)>\(String(format: "%g", $0.budget))" }.joined(separator: ","))"
    }
}

/// reachd's verdict stream as one subscriber sees it: a `curl -N` on the unix socket (or any
/// program that writes the same `data:` lines), each line stamped with the instant it arrived (on
/// a thread of its own, never the cooperative pool).
final class VerdictObserver: Sendable {
    private let process: Process
    /// A class, so the reading thread can share the (non-copyable) mutex and atomic.
    private final class Received: Sendable {
        let verdicts = Mutex<[ObservedVerdict]>([])
        let qualities = Mutex<[ObservedQuality?]>([])
        let ended = Atomic<Bool>(false)
    }

    private let received = Received()

    /// Subscribes to reachd's event stream on `socket`; with `lastEventID`, resumes after it.
    convenience init(socket: String, lastEventID: UInt64? = nil) throws {
        try self.init(
            executable: "/usr/bin/curl",
            arguments: ["-sN", "--unix-socket", socket, "http://localhost/v1/events"]
                + (lastEventID.map { ["-H", "Last-Event-ID: \($0)"] } ?? [])
        )
    }

    /// Reads the verdicts `executable` writes as reachd's event stream frames them.
    init(executable: String, arguments: [String], errorLog: String? = nil) throws {
        process = Process()
        process.executableURL = URL(filePath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        if let errorLog {
            _ = FileManager.default.createFile(atPath: errorLog, contents: nil)
            process.standardError = FileHandle(forWritingAtPath: errorLog)
        } else {
            process.standardError = FileHandle.nullDevice
        }
        try process.run()
        let reading = output.fileHandleForReading
        Thread { [received] in
            var pending = Data()
            while true {
                let chunk = reading.availableData
                if chunk.isEmpty { break }
                let now = ContinuousClock.now
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = pending[pending.startIndex..<newline]
                    pending.removeSubrange(pending.startIndex...newline)
                    if line.starts(with: Data("quality: ".utf8)),
                        let object = try? JSONSerialization.jsonObject(
                            with: Data(line.dropFirst(9)),
                            options: .fragmentsAllowed
                        )
                    {
                        received.qualities.withLock { $0.append((object as? [String: Any]).map(ObservedQuality.init)) }
                        continue
                    }
                    guard line.starts(with: Data("data: ".utf8)), let verdict = Self.parse(line.dropFirst(6), at: now)
                    else { continue }
                    received.verdicts.withLock { $0.append(verdict) }
                }
            }
            received.ended.store(true, ordering: .releasing)
        }.start()
    }

    private static func parse(_ json: Data, at: ContinuousClock.Instant) -> ObservedVerdict? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json)) as? [String: Any],
            let state = object["state"] as? String, let reason = object["reason"] as? String,
            let sequence = (object["sequence"] as? NSNumber)?.uint64Value
        else { return nil }
        let portal = object["portal"] as? [String: Any]
        let interfaces = (object["interfaces"] as? [[String: Any]] ?? []).map {
            "\($0["name"] as? String ?? "?")=\(($0["reachable"] as? Bool).map { "\($0)" } ?? "unknown")"
        }
        return ObservedVerdict(
            at: at,
            sequence: sequence,
            state: state,
            reason: reason,
            reset: object["reset"] as? Bool ?? false,
            portalURL: portal?["user_portal_url"] as? String,
            portalEvidence: portal?["evidence"] as? String,
            fault: object["fault"] as? String,
            target: object["target"] as? String,
            interfaces: interfaces.joined(separator: " "),
            observedQuality: (object["quality"] as? [String: Any]).map(ObservedQuality.init)
        )
    }

    var all: [ObservedVerdict] { received.verdicts.withLock { $0 } }
    /// The qualities a program was told (`quality:` lines, the embedded service's `qualityChanges()`), in order.
    var qualityChanges: [ObservedQuality?] { received.qualities.withLock { $0 } }
    var latest: ObservedVerdict? { received.verdicts.withLock { $0.last } }
    var hasEnded: Bool { received.ended.load(ordering: .acquiring) }

    /// The first verdict received at or after `since` that satisfies `predicate`, waiting up to `timeout`.
    func first(
        after since: ContinuousClock.Instant,
        timeout: Duration,
        where predicate: (ObservedVerdict) -> Bool
    ) async -> ObservedVerdict? {
        let received = received
        return try? await waitFor("a verdict", timeout: timeout) {
            received.verdicts.withLock { $0.first { $0.at >= since && predicate($0) } }
        }
    }

    /// Verdict changes received in `[from, to)`: `(connected, disconnected)` moves, leaving `unknown` not counted.
    func transitions(from: ContinuousClock.Instant, to: ContinuousClock.Instant) -> (restored: Int, lost: Int) {
        let all = self.all
        var counts = (restored: 0, lost: 0)
        for (previous, next) in zip(all, all.dropFirst()) where next.at >= from && next.at < to && !next.reset {
            guard previous.state != next.state, previous.state != "unknown" else { continue }
            if next.state == "connected" {
                counts.restored += 1
            } else if next.state == "disconnected" {
                counts.lost += 1
            }
        }
        return counts
    }

    /// Ids that should have arrived and did not: each event's sequence follows the last one's.
    func sequenceGaps(
        from: ContinuousClock.Instant = .now - .seconds(100_000),
        to: ContinuousClock.Instant = .now + .seconds(100_000)
    ) -> Int {
        let all = self.all
        var missing = 0
        for (previous, next) in zip(all, all.dropFirst()) where next.at >= from && next.at < to && !next.reset {
            if next.sequence > previous.sequence + 1 { missing += Int(next.sequence - previous.sequence - 1) }
        }
        return missing
    }

    /// The `disconnected` verdicts received in `[from, until)` that named a fault, in order; a
    /// fault not known yet (`null`) names none.
    func faultsTold(from: ContinuousClock.Instant, until: ContinuousClock.Instant) -> [ObservedVerdict] {
        all.filter { $0.at >= from && $0.at < until && $0.state == "disconnected" && $0.fault != nil }
    }

    /// The verdict in force at `instant`, as this subscriber knew it.
    func verdict(at instant: ContinuousClock.Instant) -> ObservedVerdict? {
        received.verdicts.withLock { $0.last { $0.at <= instant } }
    }

    func stop() async {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        let process = self.process
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread {
                process.waitUntilExit()
                continuation.resume()
            }.start()
        }
    }
}
