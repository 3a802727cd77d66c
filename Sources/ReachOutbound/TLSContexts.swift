import NIOPosix
import NIOSSL
import Synchronization

/// Client TLS contexts, made once per CA bundle and ALPN list and shared by every connection that
/// needs one (the probes, the captive-portal API client): a context reads and parses the whole
/// trust store, which would cost more than the probe.
package final class TLSContexts: Sendable {
    private struct Key: Hashable {
        var caFile: String?
        var applicationProtocols: [String]
    }

    private let made = Mutex<[Key: NIOSSLContext]>([:])

    package init() {}

    /// A context that trusts the system store, plus `caFile` when given, and offers
    /// `applicationProtocols` in ALPN. Made on NIO's blocking-I/O pool: reading the trust store
    /// takes long enough to stall the cooperative pool's few threads.
    package func context(caFile: String?, applicationProtocols: [String] = []) async throws -> NIOSSLContext {
        let key = Key(caFile: caFile, applicationProtocols: applicationProtocols)
        if let context = made.withLock({ $0[key] }) { return context }
        let context = try await NIOThreadPool.singleton.runIfActive { try Self.make(key) }
        made.withLock { $0[key] = context }
        return context
    }

    /// Forgets every context (a CA bundle may have changed on disk).
    package func removeAll() {
        made.withLock { $0.removeAll() }
    }

    private static func make(_ key: Key) throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let caFile = key.caFile {
            configuration.additionalTrustRoots = [.file(caFile)]
        }
        configuration.applicationProtocols = key.applicationProtocols
        return try NIOSSLContext(configuration: configuration)
    }
}
