import Foundation
import ReachCore
import ReachProbes
import ReachSupport
import ReachTesting
import Testing

/// Which resolvers a `dns` target without a `server` asks: those of real resolver files
/// (Fixtures/resolv: dhclient's, systemd-resolved's stub and upstream files, a local resolver's,
/// one without any), read again when they change.
@Suite("The resolvers this host uses")
struct SystemResolversTests {
    static let fixtures = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "Fixtures/resolv").path

    static func servers(_ resolvConf: String, resolved: String = "missing.conf") -> [String] {
        SystemResolvers(resolvConf: "\(fixtures)/\(resolvConf)", resolvedUpstream: "\(fixtures)/\(resolved)").servers
            .map(\.description)
    }

    @Test func resolvConfsServersInOrderOnceEachAtMostThree() {
        #expect(Self.servers("dhcp.conf") == ["192.0.2.53:53", "[2001:db8::53]:53", "192.0.2.54:53"])
    }

    @Test func behindSystemdResolvedsStubTheLinksServersAreAsked() {
        // Not the stub, which answers from its cache after the servers behind it died; a scoped
        // link-local server is left out (it would need the interface bound).
        #expect(
            Self.servers("resolved-stub.conf", resolved: "resolved-upstream.conf")
                == ["192.168.1.1:53", "[2001:db8:1::1]:53"]
        )
        #expect(Self.servers("resolved-stub.conf") == ["127.0.0.53:53"], "without resolved's file, the stub itself")
        #expect(Self.servers("resolved-stub.conf", resolved: "no-nameserver.conf") == [], "resolved with no server")
    }

    @Test func aLocalResolverIsWhatTheHostUses() {
        #expect(Self.servers("local-resolver.conf", resolved: "resolved-upstream.conf") == ["127.0.0.1:53"])
    }

    @Test func noNameserverOrNoFileIsNoResolver() {
        #expect(Self.servers("no-nameserver.conf").isEmpty)
        #expect(Self.servers("missing.conf").isEmpty)
    }

    @Test func aRewrittenFileIsReadAgain() throws {
        let directory = try TemporaryDirectory("resolv")
        let path = "\(directory.path)/resolv.conf"
        try "nameserver 192.0.2.1\n".write(toFile: path, atomically: true, encoding: .utf8)
        let resolvers = SystemResolvers(resolvConf: path, resolvedUpstream: "\(directory.path)/none")
        #expect(resolvers.servers.map(\.description) == ["192.0.2.1:53"])
        #expect(resolvers.servers.map(\.description) == ["192.0.2.1:53"], "unchanged: the same")
        // As a DHCP client does: a new file renamed over the old one (a new inode).
        try "nameserver 192.0.2.2\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(resolvers.servers.map(\.description) == ["192.0.2.2:53"])
    }

    @Test func theUpstreamReferenceReadsTheSameLines() {
        let text = (try? String(contentsOfFile: "\(Self.fixtures)/dhcp.conf", encoding: .utf8)) ?? ""
        #expect(
            ResolverConfiguration.nameservers(in: text).map(\.description)
                == ["192.0.2.53", "2001:db8::53", "192.0.2.54", "192.0.2.55"]
        )
        #expect(
            UpstreamCheck.resolverReference(resolvConf: text, resolvedUpstream: nil, links: nil)?.description
                == "192.0.2.53:53"
        )
    }
}
