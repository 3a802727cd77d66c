import Foundation
import ReachTestRigs

/// A captive portal as hotels and airports build one, in the matrix's server namespace: a web
/// server that answers every request in the server's place (``MatrixNetwork/setPortal(_:)`` sends
/// the host's TCP 80, 8080, 443 and 8443 to it with nftables DNAT), and the open internet's check
/// URL, which answers 204 while nothing intercepts it.
///
/// The portal's flavour is switched by the test: `redirect` (302 to its login page on another host,
/// what most portals do) or `login` (the login page itself, 200 `text/html`, for every path: what
/// fools a health check into `connected`). Its HTTPS port presents a certificate of its own. It is
/// a ``ReachTestRigs/StandInServer`` on the portal's addresses, answering every path, beside another
/// on the check URL's.
final class PortalServer: Sendable {
    static let address = "198.51.100.7"
    static let port = 9090
    static let tlsPort = 9443
    /// The check URL's host: a server of the "internet" that answers 204.
    static let checkAddress = "198.51.100.6"
    static let checkURL = "http://\(checkAddress)/generate_204"
    /// Where the redirect flavour sends people.
    static let signInURL = "http://portal.test/login?venue=matrix"

    private let portal: StandInServer
    /// The check URL's server, which answers 204 on `/generate_204` while nothing intercepts it.
    private let check: StandInServer

    /// - Parameter certificate: The portal's own certificate and key (for `portal.test`), which no target trusts.
    init(namespace: TestNamespace, certificate: (certificate: String, key: String)) throws {
        portal = try StandInServer(
            name: "portal-server",
            listen: ["\(Self.address):\(Self.port)"],
            tlsListen: ["\(Self.address):\(Self.tlsPort)"],
            certificate: certificate,
            everyPath: true,
            mode: Self.command("redirect"),
            namespace: namespace
        )
        check = try StandInServer(name: "check-url-server", listen: ["\(Self.checkAddress):80"], namespace: namespace)
    }

    /// The stand-in's command for a flavour.
    private static func command(_ flavour: String) -> String {
        flavour == "redirect" ? "redirect \(signInURL)" : flavour
    }

    func waitUntilReady() async throws {
        try await portal.waitUntilReady()
        try await check.waitUntilReady()
    }

    /// Switches the flavour (`redirect` or `login`) and waits until the server says it has.
    func set(_ flavour: String) async throws {
        try await portal.set(Self.command(flavour))
    }

    func stop() async {
        await portal.stop()
        await check.stop()
    }
}
