import Foundation

/// The stand-in servers' scripts (`Servers/`), for the rigs that run them.
package enum StandInScripts {
    private static let directory = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "Servers")
    /// The one stand-in HTTP(S) server (``StandInServer``).
    package static let http = directory.appending(path: "stand_in_server.py").path
    /// grpcio's own `grpc.health.v1` server, whose status a test switches on stdin.
    package static let grpcHealth = directory.appending(path: "grpc_health_server.py").path
    /// A receiver of webhooks that verifies reachd's signature (``WebhookReceiver``).
    package static let webhooks = directory.appending(path: "webhook_receiver.py").path
}
