import Foundation
import ReachTesting

/// grpcio's own `grpc.health.v1` server in the server namespace, on every address, port 50051.
/// Its whole-server status is switched on stdin (`serving`, `not_serving`, answered `ack …`);
/// the matrix kills it by PID to break a watch stream and starts another to restore it.
///
/// Its watches are blocking ones, a thread each: grpcio's default servicer sends a new status to
/// every watcher under its lock and waits for the serve thread, which may itself wait for that lock
/// to close a watch (grpc/grpc#43403). After the link flaps, the zombie watches of the lost link
/// close just then, and the server hung without its `ack` (one matrix run in five).
final class GRPCFaultServer: Sendable {
    static let port = 50051
    private let child: ChildProcess

    private static let script = """
        import sys
        from concurrent import futures
        import grpc
        from grpc_health.v1 import health, health_pb2, health_pb2_grpc
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=64))
        servicer = health.HealthServicer(experimental_non_blocking=False)
        health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
        server.add_insecure_port('0.0.0.0:\(port)')
        server.start()
        servicer.set('', health_pb2.HealthCheckResponse.SERVING)
        print('ready', flush=True)
        for line in sys.stdin:
            word = line.strip()
            if word == 'serving':
                servicer.set('', health_pb2.HealthCheckResponse.SERVING)
            elif word == 'not_serving':
                servicer.set('', health_pb2.HealthCheckResponse.NOT_SERVING)
            print('ack', word, flush=True)
        server.stop(grace=None)
        """

    /// Whether grpcio and its health service can be imported here (off the cooperative pool).
    static func isAvailable() async -> Bool {
        (try? await runProgram("/usr/bin/env", ["python3", "-c", "import grpc_health.v1.health"]))?.status == 0
    }

    init(namespace: String) throws {
        child = try ChildProcess(
            "grpc-fault-server",
            executable: MatrixNetwork.ipPath,
            arguments: ["netns", "exec", namespace, "/usr/bin/env", "python3", "-u", "-c", Self.script]
        )
    }

    func waitUntilReady() async throws {
        try await child.waitForLine(timeout: .seconds(30)) { $0 == "ready" }
    }

    func set(_ command: String) async throws {
        let before = child.output.count
        try child.writeLine(command)
        try await waitUntil("the gRPC server takes \(command)", timeout: .seconds(20)) {
            self.child.output.dropFirst(before).contains("ack \(command)")
        }
    }

    /// SIGKILL: the connection dies with the process, as when a server crashes.
    func kill() async {
        child.signal(SIGKILL)
        await child.waitForExit(timeout: .seconds(5))
    }
}
