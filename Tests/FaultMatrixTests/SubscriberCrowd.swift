import Foundation
import ReachTestRigs

/// Clients of reachd's event stream that misbehave, from outside the namespace through the unix
/// socket: one that subscribes and never reads a byte, and a crowd of 1,000 that subscribe one
/// after another, read the first byte and vanish.
final class SubscriberCrowd: Sendable {
    private let child: ChildProcess

    private static let script = """
        import socket, sys
        path, count = sys.argv[1], int(sys.argv[2])
        request = b'GET /v1/events HTTP/1.1\\r\\nHost: localhost\\r\\n\\r\\n'
        stuck = socket.socket(socket.AF_UNIX)
        stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stuck.connect(path)
        stuck.sendall(request)
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

    /// Subscribes the client that never reads, then runs the crowd.
    init(socket: String, crowd: Int) throws {
        child = try ChildProcess(
            "sse-crowd",
            executable: "/usr/bin/env",
            arguments: ["python3", "-u", "-c", Self.script, socket, "\(crowd)"]
        )
    }

    func waitUntilCrowdIsGone(timeout: Duration = .seconds(60)) async throws {
        try await child.waitForLine(timeout: timeout) { $0 == "crowd gone" }
    }

    /// Lets the never-reading client go too.
    func stop() async {
        child.closeInput()
        await child.waitForExit(timeout: .seconds(5))
    }
}

extension MatrixDaemon {
    /// reachd's resident set now (`VmRSS`), in KiB.
    var residentKiB: Int {
        guard let status = FileManager.default.contents(atPath: "/proc/\(processIdentifier)/status") else { return 0 }
        let line = String(decoding: status, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
        return line.flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") }
            ?? 0
    }

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
