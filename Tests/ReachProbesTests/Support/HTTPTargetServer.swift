import ReachTestRigs
import ReachTesting

/// Real HTTP(S) endpoints that misbehave on purpose, one path each (slow, stalled, garbage, reset,
/// self-signed TLS, a blackhole): the fixed paths of a ``ReachTesting/StandInServer``.
final class HTTPTargetServer: Sendable {
    /// Where the server listens, and the certificate its HTTPS presents.
    struct Ports: Sendable {
        let http: Int
        let https: Int
        let blackhole: Int
        /// The self-signed certificate, for `caFile`.
        let ca: String
        /// The only name the certificate holds (not 127.0.0.1).
        let server_name: String
    }

    static let serverName = "reachd-test.example"
    let ports: Ports
    private let server: StandInServer
    /// The certificate and key: removed with the server.
    private let directory: TemporaryDirectory

    init() async throws {
        directory = try TemporaryDirectory("http-targets")
        server = try StandInServer(
            name: "http-targets",
            tlsListen: ["127.0.0.1:0"],
            selfSigned: (directory.path, Self.serverName),
            blackhole: ["127.0.0.1:0"]
        )
        try await server.waitUntilReady()
        ports = Ports(
            http: server.port,
            https: server.tlsPort,
            blackhole: server.blackholePort,
            ca: server.certificateFile ?? "",
            server_name: Self.serverName
        )
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(ports.http)\(path)" }
    func secureURL(_ path: String) -> String { "https://127.0.0.1:\(ports.https)\(path)" }

    func stop() {
        server.kill()
    }

    deinit { stop() }
}
