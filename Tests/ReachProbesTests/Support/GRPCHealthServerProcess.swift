import Foundation
import ReachTesting
import ReachCore
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `Servers/grpc_health_server.py` running as a child process: grpcio's own `grpc.health.v1`
/// servicer, a health server nobody here wrote, whose status the test switches over stdin.
final class GRPCHealthServerProcess: Sendable {
    enum Failure: Error, CustomStringConvertible {
        case pythonPackagesMissing
        case noPort(String)
        case badReply(command: String, reply: String)

        var description: String {
            switch self {
            case .pythonPackagesMissing: "python3 cannot import grpc_health even after pip install grpcio grpcio-health-checking"
            case .noPort(let line): "the server printed no port: \(line.debugDescription)"
            case .badReply(let command, let reply): "command \(command.debugDescription) answered \(reply.debugDescription)"
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
    private let process: Process
    private let input: FileHandle
    private let output: FileHandle

    /// Starts the server on `port` (0: any free port) and waits until it listens.
    /// - Parameter tls: The certificate chain and key to serve gRPC over TLS with; plaintext when `nil`.
    init(port: Int = 0, mode: Mode = .health, tls: (certificate: String, key: String)? = nil) throws {
        guard Self.pythonReady else { throw Failure.pythonPackagesMissing }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Servers/grpc_health_server.py")
        let stdin = Pipe()
        let stdout = Pipe()
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, mode.rawValue] + (tls.map { ["--tls", $0.certificate, $0.key] } ?? []) + [String(port)]
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        input = stdin.fileHandleForWriting
        output = stdout.fileHandleForReading

        let first = Self.readLine(output)
        guard let chosen = Int(first) else {
            process.terminate()
            throw Failure.noPort(first)
        }
        self.port = chosen
    }

    /// Sends one command (`serving`, `not_serving SERVICE`, ...) and waits until the server applied it.
    func send(_ command: String) throws {
        input.write(Data("\(command)\n".utf8))
        let reply = Self.readLine(output)
        guard reply == "ok" else { throw Failure.badReply(command: command, reply: reply) }
    }

    /// Kills the server with SIGKILL: no GOAWAY, no graceful close; the kernel closes its sockets.
    func kill() {
        _ = Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Ends the server (closing its stdin ends it; the signal is the backstop).
    func stop() {
        try? input.close()
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    deinit { stop() }

    /// One line of the server's stdout, without the newline ("" at end of file).
    private static func readLine(_ handle: FileHandle) -> String {
        var line = Data()
        while true {
            let byte = handle.readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { break }
            line.append(byte)
        }
        return String(decoding: line, as: UTF8.self)
    }

    /// Whether `python3` (pyenv's, from PATH) can import `grpc_health`; installs grpcio and
    /// grpcio-health-checking with pip the first time it cannot. Evaluated once per test run.
    static let pythonReady = PythonModules.importable("grpc_health", installing: ["grpcio", "grpcio-health-checking"])

    static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }
}

/// A TCP listener on 127.0.0.1 that never calls `accept` and never writes: the kernel completes
/// the handshake into the backlog, so a client connects and then hears nothing at all, the way a
/// hung server looks.
final class SilentTCPListener: Sendable {
    let port: Int
    private let fd: Int32

    init() {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = GRPCHealthServerProcess.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketFD, $0, length) } }
        _ = listen(socketFD, 64)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketFD, $0, &length) }
        }
        fd = socketFD
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether a client has connected: its connection waits in the backlog (never accepted), which
    /// makes the listening socket readable.
    var hasPendingConnection: Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) > 0
    }

    deinit { close(fd) }
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
        print("watch reported \(result.failure.map { "\($0.reason) (\($0.detail ?? ""))" } ?? "success") after \(result.latency)")
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
