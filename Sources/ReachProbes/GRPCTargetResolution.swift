import GRPCCore
import GRPCNIOTransportHTTP2
import NIOPosix
import ReachCore
import ReachSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where one gRPC probe has got to, written by the transport's callbacks and read when the
/// deadline fires, so a timeout names the phase it was stuck in (`dns`, `connect`, `tls`, `head`);
/// and, over TLS, what the handshake saw: the chain the server presented and why it failed.
///
/// Phases only move forward: a late callback from an earlier phase cannot move it back.
final class GRPCProbePhaseTracker: Sendable {
    private struct State {
        var phase: ProbePhase
        var certificate: ServerCertificate?
        var tlsFailure: ProbeFailure?
    }

    private let state: Mutex<State>

    init(_ initial: ProbePhase = .dns) {
        self.state = Mutex(State(phase: initial))
    }

    var current: ProbePhase { state.withLock { $0.phase } }

    /// The chain the server presented, once a TLS handshake got as far as its certificates.
    var certificate: ServerCertificate? { state.withLock { $0.certificate } }

    /// Why the TLS handshake failed: the transport reports only that the connection closed.
    var tlsFailure: ProbeFailure? { state.withLock { $0.tlsFailure } }

    func advance(to next: ProbePhase) {
        state.withLock { state in
            if Self.order(next) > Self.order(state.phase) { state.phase = next }
        }
    }

    func presented(_ certificate: ServerCertificate) {
        state.withLock { $0.certificate = certificate }
    }

    func handshakeFailed(_ failure: ProbeFailure) {
        state.withLock { $0.tlsFailure = failure }
    }

    private static func order(_ phase: ProbePhase) -> Int {
        switch phase {
        case .dns: 0
        case .connect: 1
        case .tls: 2
        case .head: 3
        case .body: 4
        }
    }
}

/// A host name that did not resolve (in the requested address family), from our own `getaddrinfo`.
struct GRPCResolutionError: Error, CustomStringConvertible {
    var host: String
    var family: AddressFamily
    var message: String

    var description: String { "cannot resolve \(host) (\(family.rawValue)): \(message)" }
}

/// The transport's own DNS resolution, wrapped so the probe learns when it finished.
///
/// `.auto` targets use gRPC's `.dns(host:port:)` resolution unchanged (every address family,
/// the transport's pick-first over the addresses); the wrapper only moves the phase tracker from
/// `dns` to `connect` when the first resolution result arrives, so a deadline that passes in a
/// slow resolver is reported as a DNS timeout rather than a connect timeout.
struct GRPCPhaseTrackingDNSTarget: ResolvableTarget, Sendable {
    var dns: ResolvableTargets.DNS
    var tracker: GRPCProbePhaseTracker
}

struct GRPCPhaseTrackingDNSResolverFactory: NameResolverFactory, Sendable {
    typealias Target = GRPCPhaseTrackingDNSTarget

    func resolver(for target: Target) -> NameResolver {
        let inner = NameResolvers.DNS().resolver(for: target.dns)
        let tracker = target.tracker
        let names = inner.names.map { @Sendable (result: NameResolutionResult) -> NameResolutionResult in
            tracker.advance(to: .connect)
            return result
        }
        return NameResolver(
            names: RPCAsyncSequence(wrapping: names),
            updateMode: inner.updateMode,
            authority: inner.authority
        )
    }
}

/// Family-restricted name resolution for `.ipv4` / `.ipv6` targets.
///
/// The transport's DNS resolver asks `getaddrinfo` for every family and connects to whatever comes
/// first, so a probe pinned to one family resolves the name itself with `ai_family` set and hands
/// the transport literal addresses of that family only (`.ipv4(addresses:)` / `.ipv6(addresses:)`).
/// The lookup blocks, so it runs on NIO's shared thread pool rather than a cooperative thread.
enum GRPCAddressResolver {
    static func resolve(host: String, family: AddressFamily) async throws -> [String] {
        try await NIOThreadPool.singleton.runIfActive {
            try resolveBlocking(host: host, family: family)
        }
    }

    static func resolveBlocking(host: String, family: AddressFamily) throws -> [String] {
        var hints = addrinfo()
        switch family {
        case .auto: hints.ai_family = AF_UNSPEC
        case .ipv4: hints.ai_family = AF_INET
        case .ipv6: hints.ai_family = AF_INET6
        }
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        hints.ai_protocol = Int32(IPPROTO_TCP)

        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        defer { if let list { freeaddrinfo(list) } }
        guard status == 0, let list else {
            let message = gai_strerror(status).map { String(cString: $0) } ?? "getaddrinfo error \(status)"
            throw GRPCResolutionError(host: host, family: family, message: message)
        }

        var addresses: [String] = []
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            if let text = presentation(of: current.pointee), !addresses.contains(text) {
                addresses.append(text)
            }
            entry = current.pointee.ai_next
        }
        guard !addresses.isEmpty else {
            throw GRPCResolutionError(host: host, family: family, message: "no addresses")
        }
        return addresses
    }

    private static func presentation(of info: addrinfo) -> String? {
        guard let address = info.ai_addr else { return nil }
        let family = info.ai_family
        guard family == AF_INET || family == AF_INET6 else { return nil }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(NI_MAXHOST)) { buffer -> String? in
            guard let base = buffer.baseAddress,
                getnameinfo(address, info.ai_addrlen, base, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0
            else { return nil }
            return String(cString: base)
        }
    }
}
