import Foundation
import ReachTestRigs

/// Clients of reachd's event stream that misbehave, from outside the namespace through the unix
/// socket: a crowd (1,000) that subscribe one after another, read the first byte and vanish, and
/// (when asked) one that subscribes first and never reads a byte.
final class SubscriberCrowd: Sendable {
    private let child: ChildProcess

    private static let script = """
        import socket, sys
        path, count, stuck = sys.argv[1], int(sys.argv[2]), sys.argv[3] == 'stuck'
        request = b'GET /v1/events HTTP/1.1\\r\\nHost: localhost\\r\\n\\r\\n'
        if stuck:
            held = socket.socket(socket.AF_UNIX)
            held.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            held.connect(path)
            held.sendall(request)
            print('stuck', flush=True)
        for _ in range(count):
            s = socket.socket(socket.AF_UNIX)
            s.connect(path)
            s.sendall(request)
            s.recv(1)
            s.close()
        print('crowd gone', flush=True)
        sys.stdin.read()
        """

    /// Subscribes the client that never reads (when `withOneThatNeverReads`), then runs the crowd.
    init(socket: String, crowd: Int, withOneThatNeverReads: Bool = false) throws {
        child = try ChildProcess(
            "sse-crowd",
            executable: "/usr/bin/env",
            arguments: [
                "python3", "-u", "-c", Self.script, socket, "\(crowd)", withOneThatNeverReads ? "stuck" : "crowd",
            ]
        )
    }

    /// One client that subscribes and hangs up at once: reachd's first write to it fails, so it is
    /// gone (and a heap trim due) a moment after the request, not at the next heartbeat.
    static func hangUp(socket: String) async throws {
        let script = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX)
            s.connect(sys.argv[1])
            s.sendall(b'GET /v1/events HTTP/1.1\\r\\nHost: localhost\\r\\n\\r\\n')
            s.close()
            """
        _ = try await runProgram("/usr/bin/env", ["python3", "-c", script, socket])
    }

    func waitUntilCrowdIsGone(timeout: Duration = .seconds(60)) async throws {
        try await child.waitForLine(timeout: timeout) { $0 == "crowd gone" }
    }

    /// Lets the never-reading client go.
    func stop() async {
        child.closeInput()
        await child.waitForExit(timeout: .seconds(5))
    }
}

extension MatrixDaemon {
    /// `reachd_subscribers` from `/metrics`: subscribers to the verdict stream right now.
    func subscribers() async -> Int? {
        await metric("reachd_subscribers").map { Int($0) }
    }

    /// The sum of a metric's series (`name` or `name{...}`) from `/metrics`.
    func metric(_ name: String) async -> Double? {
        guard
            let result = try? await runProgram(
                "/usr/bin/curl",
                ["-sf", "--unix-socket", socketPath, "http://localhost/metrics"]
            ),
            result.status == 0
        else { return nil }
        let values = result.output.split(separator: "\n")
            .filter { $0.hasPrefix(name + " ") || $0.hasPrefix(name + "{") }
            .compactMap { Double($0.split(separator: " ").last ?? "") }
        return values.isEmpty ? nil : values.reduce(0, +)
    }

    /// `GET /v1/status`, parsed.
    func status() async -> [String: Any]? {
        guard
            let result = try? await runProgram(
                "/usr/bin/curl",
                ["-sf", "--unix-socket", socketPath, "http://localhost/v1/status"]
            ),
            result.status == 0
        else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
    }
}
