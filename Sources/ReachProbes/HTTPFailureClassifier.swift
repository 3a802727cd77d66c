import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import ReachCore

#if canImport(Glibc)
import Glibc
#endif

/// Names why an exchange failed, from the errors AsyncHTTPClient and SwiftNIO actually raise.
///
/// Each rule below was observed against a real server in `HTTPProberTests`:
/// - the probe's own deadline → `timeout`, in the phase the exchange had reached;
/// - `NIOConnectionError` with only DNS errors, or `SocketAddressError.unknown` → `dnsFailure`;
/// - `IOError` and `ChannelError` (alone or inside `NIOConnectionError`) → ``SocketFailure``, e.g.
///   ECONNREFUSED → `connectionRefused`, EAFNOSUPPORT (wrong address family) → `networkUnreachable`;
/// - `NIOSSLError` / `BoringSSLError` / `NIOSSLExtraError` → `tlsFailure` with the verifier's reason;
/// - `HTTPParserError` (garbage instead of HTTP) → `protocolError`;
/// - `HTTPClientError.remoteConnectionClosed` (closed before a whole answer) → `connectionReset`.
enum HTTPFailureClassifier {
    static func classify(_ error: any Error, timedOut: Bool, phase: ProbePhase) -> ProbeFailure {
        if timedOut {
            return ProbeFailure(.timeout, phase: phase, detail: "no complete answer before the deadline (stuck in \(phase.rawValue))")
        }
        return classify(error, phase: phase)
    }

    private static func classify(_ error: any Error, phase: ProbePhase) -> ProbeFailure {
        switch error {
        case let error as HTTPClientError:
            switch error {
            case .connectTimeout: return ProbeFailure(.timeout, phase: .connect, detail: "connect timed out")
            case .tlsHandshakeTimeout: return ProbeFailure(.timeout, phase: .tls, detail: "TLS handshake timed out")
            case .readTimeout, .deadlineExceeded: return ProbeFailure(.timeout, phase: phase, detail: "\(error)")
            case .remoteConnectionClosed: return ProbeFailure(.connectionReset, phase: phase, detail: "the server closed the connection before answering")
            case .cancelled: return ProbeFailure(.cancelled, phase: phase)
            default: return ProbeFailure(.protocolError, phase: phase, detail: "\(error)")
            }
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
