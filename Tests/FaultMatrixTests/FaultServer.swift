import Foundation
import ReachTestRigs

/// The matrix's HTTP health server, in the server namespace: a ``ReachTesting/StandInServer`` on
/// every address, port 8080, whose behaviour the test switches (its commands: `ok`, `503`,
/// `garbage`, `stall`, `slow SECONDS`, `close`, `open`, `restarting SECONDS`, ...); beside it, when
/// given a certificate, a second one on 8443 that answers 200 over HTTPS whatever the first does.
final class FaultServer: Sendable {
    static let port = 8080
    /// An HTTPS server answering 200, with a certificate for another name (`other.test`).
    static let tlsPort = 8443
    private let server: StandInServer
    private let tls: StandInServer?

    /// - Parameters:
    ///   - certificate: A certificate and key (PEM files) for the HTTPS server on ``tlsPort``.
    ///   - dualStack: Whether the HTTP server listens on IPv6 as well (else on IPv4 only).
    init(
        namespace: TestNamespace,
        certificate: (certificate: String, key: String)? = nil,
        dualStack: Bool = false
    ) throws {
        server = try StandInServer(
            name: "fault-server",
            listen: [dualStack ? "[::]:\(Self.port)" : "0.0.0.0:\(Self.port)"],
            dualStack: dualStack,
            namespace: namespace
        )
        tls = try certificate.map { certificate in
            try StandInServer(
                name: "fault-server-tls",
                listen: [],
                tlsListen: ["0.0.0.0:\(Self.tlsPort)"],
                certificate: certificate,
                namespace: namespace
            )
        }
    }

    /// Makes a self-signed certificate for `name.test` in `directory`; returns its files.
    static func makeCertificate(
        in directory: String,
        name: String = "other"
    ) async throws -> (certificate: String, key: String) {
        let (certificate, key) = ("\(directory)/\(name).pem", "\(directory)/\(name).key")
        let result = try await runProgram(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
                "-out", certificate,
                "-days", "2", "-subj", "/CN=\(name).test", "-addext", "subjectAltName=DNS:\(name).test",
            ]
        )
        guard result.status == 0 else { throw ChildProcess.Failed(description: "openssl failed: \(result.errors)") }
        return (certificate, key)
    }

    func waitUntilReady() async throws {
        try await server.waitUntilReady()
        try await tls?.waitUntilReady()
    }

    /// Switches the behaviour and waits until the server says it has.
    func set(_ command: String, timeout: Duration = .seconds(20)) async throws {
        try await server.set(command, timeout: timeout)
    }

    func stop() async {
        await server.stop()
        await tls?.stop()
    }
}
