import Foundation
import ReachTestRigs
import ReachTesting

/// grpcio's own `grpc.health.v1` server in the server namespace, on every address, port 50051:
/// the gRPC stand-in of the tests (`StandInScripts.grpcHealth`), whose whole-server status is
/// switched on stdin (`serving`, `not_serving`, each answered `ok`); the matrix kills it by PID to
/// break a watch stream and starts another to restore it.
///
/// Its watches are blocking ones, a thread each: grpcio's default servicer sends a new status to
/// every watcher under its lock and waits for the serve thread, which may itself wait for that lock
/// to close a watch (grpc/grpc#43403). After the link flaps, the zombie watches of the lost link
/// close just then, and the server hung without its answer (one matrix run in five).
final class GRPCFaultServer: Sendable {
    static let port = 50051
    private let child: ChildProcess

    /// Whether grpcio and its health service can be imported here (off the cooperative pool).
    static func isAvailable() async -> Bool {
        (try? await runProgram("/usr/bin/env", ["python3", "-c", "import grpc_health.v1.health"]))?.status == 0
    }

    init(namespace: TestNamespace) throws {
        let command = TestNamespace.command(
            ["/usr/bin/env", "python3", "-u", StandInScripts.grpcHealth, "--host", "0.0.0.0", "\(Self.port)"],
            in: namespace
        )
        child = try ChildProcess("grpc-fault-server", executable: command.executable, arguments: command.arguments)
    }

    func waitUntilReady() async throws {
        try await child.waitForLine(timeout: .seconds(30)) { Int($0) == Self.port }
    }

    func set(_ command: String) async throws {
        let answered = child.output.count { $0 == "ok" }
        try child.writeLine(command)
        try await waitUntil("the gRPC server takes \(command)", timeout: .seconds(20)) {
            self.child.output.count { $0 == "ok" } > answered
        }
    }

    /// SIGKILL: the connection dies with the process, as when a server crashes.
    func kill() async {
        child.signal(SIGKILL)
        await child.waitForExit(timeout: .seconds(5))
    }
}
