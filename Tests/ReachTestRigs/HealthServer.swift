/// The healthy server a test points reachd at: a ``StandInServer`` on loopback answering 200 `ok`
/// on `/api/v1/health` (404 elsewhere). Given a port, it binds that one (address reuse on), so a
/// test can stop it and start it again where reachd expects it.
package final class HealthServer: Sendable {
    package static let path = "/api/v1/health"
    package let port: Int
    private let server: StandInServer

    /// The health URL, as a target's `url:`.
    package var url: String { "http://127.0.0.1:\(port)\(Self.path)" }

    /// - Parameter port: 0 for any free port.
    package init(port: Int = 0) async throws {
        server = try StandInServer(name: "health-server", listen: ["127.0.0.1:\(port)"], path: Self.path)
        try await server.waitUntilReady()
        self.port = server.port
    }

    /// Switches how it answers (``StandInServer/set(_:timeout:)``): `503`, `slow 3`, `ok`, ...
    package func set(_ command: String) async throws {
        try await server.set(command)
    }

    /// Kills the server without waiting, for clean-up that cannot wait.
    package func kill() {
        server.kill()
    }

    /// Stops the server and waits until it is gone (its port is free again).
    package func stop() async {
        await server.stop()
    }
}
