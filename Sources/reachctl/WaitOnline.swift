import ArgumentParser
import Foundation
import ReachServer
import Synchronization

/// A duration on the command line: `30s`, `500ms`, `2m`, `1h`, `1m30s`, or a bare number of seconds,
/// up to a year.
struct DurationArgument: ExpressibleByArgument, Sendable, CustomStringConvertible {
    let duration: Duration
    let description: String
    static let longest: Duration = .seconds(365 * 24 * 3600)

    /// Whole milliseconds, or `nil` past ``longest`` (where converting could overflow).
    private static func milliseconds(_ seconds: Double) -> Duration? {
        let milliseconds = (seconds * 1000).rounded()
        guard milliseconds.isFinite, milliseconds <= Double(longest / .milliseconds(1)) else { return nil }
        return .milliseconds(Int64(milliseconds))
    }

    init?(argument: String) {
        let text = argument.trimmingCharacters(in: .whitespaces).lowercased()
        guard !text.isEmpty else { return nil }
        if let seconds = Double(text) {
            guard seconds >= 0, let milliseconds = Self.milliseconds(seconds) else { return nil }
            duration = milliseconds
            description = argument
            return
        }
        var total: Duration = .zero
        var rest = Substring(text)
        while !rest.isEmpty {
            let number = rest.prefix { $0.isNumber || $0 == "." }
            guard let value = Double(number), value >= 0 else { return nil }
            rest = rest.dropFirst(number.count)
            let unit = rest.prefix { $0.isLetter }
            rest = rest.dropFirst(unit.count)
            let scale: Double
            switch unit {
            case "ms": scale = 0.001
            case "s": scale = 1
            case "m": scale = 60
            case "h": scale = 3600
            default: return nil
            }
            guard let part = Self.milliseconds(value * scale) else { return nil }
            total += part
            guard total <= Self.longest else { return nil }
        }
        duration = total
        description = argument
    }
}

extension ReachctlCommand {
    struct WaitOnline: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "wait-online",
            abstract: "Wait until reachd says connected, like nm-online or systemd-networkd-wait-online.",
            discussion: """
                Exits 0 as soon as the state is connected. Keeps trying while reachd cannot be \
                reached (it may still be starting). At the timeout, exits 1 when reachd answered but \
                never said connected, 2 when it could never be reached.

                For a unit that must wait for the server: ExecStartPre=/usr/bin/reachctl wait-online --timeout 60s
                """)

        @ParentCommand var root: ReachctlCommand

        @Option(help: ArgumentHelp("Give up after this long: 30s, 500ms, 2m, or seconds.", valueName: "duration"))
        var timeout = DurationArgument(argument: "30s")!

        @Flag(name: .shortAndLong, help: "Print nothing, not even why it gave up.")
        var quiet = false

        private enum Outcome: Sendable { case connected, timedOut }

        /// What the waiting learned, for the message at the timeout.
        private final class Progress: Sendable {
            let reachable = Mutex(false)
            let lastWords = Mutex<String?>(nil)
        }

        func run() async throws {
            let endpoint = try root.resolvedEndpoint()
            let limit = timeout.duration
            let progress = Progress()
            let outcome: Outcome = try await ReachdClient.with(endpoint) { client in
                try await withThrowingTaskGroup(of: Outcome.self) { group in
                    group.addTask {
                        try? await Task.sleep(for: limit)
                        return .timedOut
                    }
                    group.addTask {
                        var backoff: Duration = .milliseconds(100)
                        while !Task.isCancelled {
                            var connected = false
                            do {
                                try await client.events(after: nil) { event in
                                    progress.reachable.withLock { $0 = true }
                                    guard let document = try? JSONDecoder().decode(StatusDocument.self, from: Data(event.data.utf8)) else {
                                        return true
                                    }
                                    if document.state == "connected" {
                                        connected = true
                                        return false
                                    }
                                    progress.lastWords.withLock { $0 = Summary.headline(document) }
                                    return true
                                }
                            } catch let error as ReachdUnreachable {
                                progress.lastWords.withLock { $0 = error.description }
                            }
                            if connected { return .connected }
                            try await Task.sleep(for: backoff)
                            backoff = min(backoff * 2, .seconds(2))
                        }
                        throw CancellationError()
                    }
                    let first = try await group.next() ?? .timedOut
                    group.cancelAll()
                    return first
                }
            }
            if outcome == .connected { return }
            let wasReachable = progress.reachable.withLock { $0 }
            if !quiet {
                let why = progress.lastWords.withLock { $0 } ?? "no answer"
                Output.error("reachctl: not connected after \(timeout): \(why)")
            }
            throw ExitCode(wasReachable ? ExitStatus.notConnected : ExitStatus.unreachable)
        }
    }
}
