import ReachCore
import ReachPOSIX
import ReachSupport
import Synchronization

/// The resolvers this host uses (``ReachCore/ResolverConfiguration``), read from its files and
/// read again only when one of them changed: a DHCP lease or a network switch rewrites them, and
/// a probe then asks the new servers, while a probe a second pays two `stat` calls, not two reads.
package final class SystemResolvers: Sendable {
    private let resolvConf: String
    private let resolvedUpstream: String
    private let cache = Mutex<(stamp: [FileStamp?], servers: [HostPort])?>(nil)

    /// - Parameters: The files, for tests; the system's by default.
    package init(
        resolvConf: String = ResolverConfiguration.resolvConfFile,
        resolvedUpstream: String = ResolverConfiguration.resolvedUpstreamFile
    ) {
        self.resolvConf = resolvConf
        self.resolvedUpstream = resolvedUpstream
    }

    /// The servers to ask now; empty when the host has none.
    package var servers: [HostPort] {
        let stamp = [FileStamp(resolvConf), FileStamp(resolvedUpstream)]
        if let cached = cache.withLock({ $0 }), cached.stamp == stamp { return cached.servers }
        let servers = ResolverConfiguration.servers(
            resolvConf: Self.read(resolvConf) ?? "",
            resolvedUpstream: stamp[1] == nil ? nil : Self.read(resolvedUpstream)
        )
        cache.withLock { $0 = (stamp, servers) }
        return servers
    }

    /// The file whose servers a target asks, for a detail that says where none was found.
    package var source: String { resolvConf }

    /// A resolver file's text; `nil` when it is missing, unreadable or past 64 KiB (no real one is).
    private static func read(_ path: String) -> String? {
        try? BoundedFile.readText(path, limit: 64 << 10).get()
    }
}
