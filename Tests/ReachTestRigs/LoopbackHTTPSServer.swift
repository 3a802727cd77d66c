/// A health endpoint over HTTPS on 127.0.0.1: a ``StandInServer`` answering 200 `ok`, presenting
/// the certificate chain it was given, e.g. one ``PrivateCA`` issued that expires in three days.
package final class LoopbackHTTPSServer: Sendable {
    package let port: Int
    private let server: StandInServer

    /// A URL of the server, by address (the ``PrivateCA`` certificates name 127.0.0.1 too).
    package var url: String { "https://127.0.0.1:\(port)/healthz" }

    /// - Parameter certificate: The PEM chain (leaf first) and the leaf's key.
    package init(certificate: (certificate: String, key: String)) async throws {
        server = try StandInServer(
            name: "https-health",
            listen: [],
            tlsListen: ["127.0.0.1:0"],
            certificate: certificate
        )
        try await server.waitUntilReady()
        port = server.tlsPort
    }

    package func stop() async {
        await server.stop()
    }
}
