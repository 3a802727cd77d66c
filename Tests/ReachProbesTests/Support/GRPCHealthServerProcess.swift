import Foundation
import ReachCore
import ReachTestRigs
import ReachTesting
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// ReachTestRigs' `Servers/grpc_health_server.py` running as a child process: grpcio's own `grpc.health.v1`
/// servicer, a health server nobody here wrote, whose status the test switches over stdin.
final class GRPCHealthServerProcess: Sendable {
    enum Failure: Error, CustomStringConvertible {
        case pythonPackagesMissing
        case noPort(String)
        case badReply(command: String, reply: String)

        var description: String {
            switch self {
            case .pythonPackagesMissing:
                "python3 cannot import grpc_health even after pip install grpcio grpcio-health-checking"
            case .noPort(let line): "the server printed no port: \(line.debugDescription)"
            case .badReply(let command, let reply):
                "command \(command.debugDescription) answered \(reply.debugDescription)"
            }
        }
    }

    /// What the script serves.
    enum Mode: String, Sendable {
        /// grpcio's health servicer.
        case health = "--health"
        /// A gRPC server with no services: every health call fails with UNIMPLEMENTED.
        case withoutHealth = "--without-health"
        /// A plain HTTP/1.1 server, not gRPC at all.
        case http1 = "--http1"
    }

    /// The port the server listens on, on 127.0.0.1.
    let port: Int
    /// Read on threads of its own (``ChildProcess``): waiting for the port or a reply never holds
    /// a thread of the cooperative pool, which the prober under test needs.
    private let child: ChildProcess

    /// Starts the server on `port` (0: any free port) and waits until it listens.
    /// - Parameter tls: The certificate chain and key to serve gRPC over TLS with; plaintext when `nil`.
    init(port: Int = 0, mode: Mode = .health, tls: (certificate: String, key: String)? = nil) async throws {
        guard Self.pythonReady else { throw Failure.pythonPackagesMissing }
        child = try ChildProcess(
            "grpc_health_server.py",
            executable: "/usr/bin/env",
            arguments: ["python3", StandInScripts.grpcHealth, mode.rawValue]
                + (tls.map { ["--tls", $0.certificate, $0.key] } ?? [])
                + [String(port)]
        )
        let first = try await child.waitForLine(timeout: .seconds(30)) { _ in true }
        guard let chosen = Int(first) else {
            child.signal(SIGKILL)
            throw Failure.noPort(first)
        }
        self.port = chosen
    }

    /// Sends one command (`serving`, `not_serving SERVICE`, ...) and waits until the server applied it.
    func send(_ command: String) async throws {
        let answered = child.output.count
        try child.writeLine(command)
        try await waitUntil("the server's reply to \(command)", timeout: .seconds(10)) {
            self.child.output.count > answered
        }
        let reply = child.output[answered]
        guard reply == "ok" else { throw Failure.badReply(command: command, reply: reply) }
    }

    /// Kills the server with SIGKILL: no GOAWAY, no graceful close; the kernel closes its sockets.
    func kill() async {
        await child.stop()
    }

    /// Ends the server: closing its stdin ends it; the signal is the backstop (Foundation reaps it).
    func stop() {
        child.closeInput()
        if child.isRunning { child.signal(SIGKILL) }
    }

    deinit { stop() }

    /// Whether `python3` (pyenv's, from PATH) can import `grpc_health`; installs grpcio and
    /// grpcio-health-checking with pip the first time it cannot. Evaluated once per test run.
    static let pythonReady = PythonModules.importable("grpc_health", installing: ["grpcio", "grpcio-health-checking"])
}

/// Records what a watch reports, each result with the instant it arrived, and lets a test wait for
/// the next one that matches.
final class WatchRecorder: Sendable {
    struct Entry: Sendable {
        let result: ProbeResult
        /// The epoch the prober read when this result's observation began.
        let epoch: ProbeEpoch
        let at: ContinuousClock.Instant
    }

    private let entries = Mutex<[Entry]>([])
    private let epochsRead = Atomic<UInt64>(0)

    /// A new epoch at every read, so each result shows which observation it came from.
    @Sendable func nextEpoch() -> ProbeEpoch {
        ProbeEpoch(rawValue: epochsRead.add(1, ordering: .relaxed).newValue)
    }

    func record(_ result: ProbeResult, epoch: ProbeEpoch) {
        let entry = Entry(result: result, epoch: epoch, at: .now)
        entries.withLock { $0.append(entry) }
        print(
            "watch reported \(result.failure.map { "\($0.reason) (\($0.detail ?? ""))" } ?? "success") after \(result.latency)"
        )
        expectOurWords(result.failure)
    }

    var count: Int { entries.withLock { $0.count } }

    var all: [Entry] { entries.withLock { $0 } }

    /// The first entry at index `start` or later that satisfies `matches`, polling until `limit` passes.
    func first(from start: Int, within limit: Duration, where matches: (ProbeResult) -> Bool) async -> Entry? {
        var found: Entry?
        try? await waitUntil("a matching watch report", timeout: limit) {
            found = entries.withLock { entries in entries.dropFirst(start).first { matches($0.result) } }
            return found != nil
        }
        return found
    }
}
