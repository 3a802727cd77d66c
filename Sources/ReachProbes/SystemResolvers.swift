import ReachCore
import ReachPOSIX
import ReachSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

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

/// What tells that a file changed without reading it: its inode, size and modification time.
private struct FileStamp: Equatable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var seconds: Int
    var nanoseconds: Int

    init?(_ path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        seconds = Int(status.st_mtim.tv_sec)
        nanoseconds = Int(status.st_mtim.tv_nsec)
    }
}
