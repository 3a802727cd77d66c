import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import ReachCore

#if canImport(Glibc)
import Glibc
#endif

/// Names why an exchange failed, from the errors SwiftNIO and NIOSSL actually raise.
///
/// Each rule below was observed against a real server in `HTTPProberTests` (the probe's own
/// deadline and the peer closing early are named by ``HTTPExchange`` itself):
/// - `NIOConnectionError` with only DNS errors, or `SocketAddressError.unknown` → `dnsFailure`;
/// - `IOError` and `ChannelError` (alone or inside `NIOConnectionError`) → ``SocketFailure``, e.g.
///   ECONNREFUSED → `connectionRefused`, EAFNOSUPPORT (wrong address family) → `networkUnreachable`;
/// - `NIOSSLError` / `BoringSSLError` / `NIOSSLExtraError` → `tlsFailure` with the verifier's reason;
/// - `HTTPParserError` (garbage instead of HTTP) → `protocolError`.
enum HTTPFailureClassifier {
    static func classify(_ error: any Error, phase: ProbePhase) -> ProbeFailure {
        switch error {
        case let error as NIOConnectionError:
            if let first = error.connectionErrors.first {
                return classify(first.error, phase: .connect)
            }
            let dnsError = error.dnsAError ?? error.dnsAAAAError
            return ProbeFailure(.dnsFailure, phase: .dns, detail: "\(error.host) did not resolve\(dnsError.map { ": \($0)" } ?? "")")
        case let error as SocketAddressError:
            return ProbeFailure(.dnsFailure, phase: .dns, detail: "\(error)")
        case let error as IOError:
            return SocketFailure.classify(errno: error.errnoCode, phase: phase, detail: "\(error)")
                ?? ProbeFailure(.protocolError, phase: phase, detail: "\(error)")
        case let error as ChannelError:
            return SocketFailure.classify(error, phase: phase, detail: "\(error)") ?? ProbeFailure(.protocolError, phase: phase, detail: "\(error)")
        case let error as NIOSSLError:
            return ProbeFailure(.tlsFailure, phase: .tls, detail: "\(error)")
        case let error as BoringSSLError:
            return ProbeFailure(.tlsFailure, phase: .tls, detail: "\(error)")
        case let error as NIOSSLExtraError:
            return ProbeFailure(.tlsFailure, phase: .tls, detail: "\(error)")
        case let error as HTTPParserError:
            return ProbeFailure(.protocolError, phase: .head, detail: "not an HTTP answer: \(error)")
        default:
            return ProbeFailure(.protocolError, phase: phase, detail: String(describing: error))
        }
    }
}
