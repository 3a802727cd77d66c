/// A captive-portal API (RFC 8908) over HTTPS, on loopback or on an address of a network
/// namespace: a ``StandInServer`` answering every GET with the JSON it was last given
/// (``answer(_:)``), as `application/captive+json`, keeping each request's `Accept` header.
package final class CaptivePortalAPIServer: Sendable {
    package let port: Int
    private let server: StandInServer

    /// The API's URI on loopback, as networkd's `CAPTIVE_PORTAL=` would name it.
    package var url: String { "https://127.0.0.1:\(port)/captive" }

    /// - Parameters:
    ///   - host: The address to listen on, in `namespace` when one is given.
    ///   - namespace: A network namespace (`ip netns`) to run in; the test's own when `nil`.
    package init(
        certificate: (certificate: String, key: String),
        answer json: String,
        host: String = "127.0.0.1",
        namespace: TestNamespace? = nil
    ) async throws {
        server = try StandInServer(
            name: "captive-portal-api",
            listen: [],
            tlsListen: ["\(host):0"],
            certificate: certificate,
            logRequests: true,
            mode: Self.command(json),
            namespace: namespace
        )
        try await server.waitUntilReady()
        port = server.tlsPort
    }

    /// The stand-in's command that answers `json` (on one line, as the server reads it).
    private static func command(_ json: String) -> String {
        "json " + json.split(whereSeparator: \.isNewline).joined(separator: " ")
    }

    /// Answers `json` from now on.
    package func answer(_ json: String) async throws {
        try await server.set(Self.command(json))
    }

    /// The `Accept` header of every request so far.
    package var requests: [String] {
        server.requests.map { $0.split(separator: " ", maxSplits: 2).dropFirst(2).first.map(String.init) ?? "" }
    }

    package func stop() async {
        await server.stop()
    }
}
