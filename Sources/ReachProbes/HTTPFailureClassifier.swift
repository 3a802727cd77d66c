import NIOCore
import NIOPosix
import NIOSSL
import ReachCore
import ReachOutbound
import ReachPOSIX

/// Names why an exchange failed, from the errors SwiftNIO and NIOSSL actually raise, with a
/// detail in our words (see ``SocketFailure``).
///
/// Each rule below was observed against a real server in `HTTPProberTests` (the probe's own
/// deadline and the peer closing early are named by ``HTTPExchange`` itself):
/// - `NIOConnectionError` with only DNS errors, or `SocketAddressError` → `dnsFailure`, with the
///   resolver's words;
/// - `IOError` and `ChannelError` (alone or inside `NIOConnectionError`) → ``SocketFailure``, e.g.
///   ECONNREFUSED → `connectionRefused`; an errno with no meaning for a probe → `protocolError`
///   with the errno's words;
/// - ``DeviceBindingError`` (a probe of one uplink) → `cancelled` when the kernel refuses it, else
///   `networkUnreachable`;
/// - ``AddressFamilyMismatch`` (an address of the other family) → `networkUnreachable`;
/// - `NIOSSLError` / `BoringSSLError` / `NIOSSLExtraError` → `tlsFailure` with the verifier's reason;
/// - ``HTTPResponseReader/Malformed`` (garbage instead of HTTP) → `protocolError`.
enum HTTPFailureClassifier {
    static func classify(_ error: any Error, phase: ProbePhase) -> ProbeFailure {
        switch error {
        case let error as NIOConnectionError:
            if let first = error.connectionErrors.first {
                return classify(first.error, phase: .connect)
            }
            let unknown = (error.dnsAError ?? error.dnsAAAAError) as? SocketAddressError.UnknownHost
            return SocketFailure.unresolved(error.host, unknown?.errorDescription)
        case let error as SocketAddressError.UnknownHost:
            return SocketFailure.unresolved(error.host, error.errorDescription)
        case is SocketAddressError:
            return ProbeFailure(.dnsFailure, phase: .dns)
        case let error as IOError:
            return SocketFailure.classify(errno: error.errnoCode, phase: phase)
                ?? ProbeFailure(.protocolError, phase: phase, detail: SystemCallError.reason(error.errnoCode))
        case let error as ChannelError:
            return SocketFailure.classify(error, phase: phase) ?? ProbeFailure(.protocolError, phase: phase)
        case let error as DeviceBindingError:
            // Refused: nothing is learned about the network, so it is no evidence.
            return error.isRefused
                ? ProbeFailure(.cancelled, phase: .connect, detail: ProbeFailure.bindingRefused)
                : ProbeFailure(.networkUnreachable, phase: .connect, detail: error.description)
        case let error as AddressFamilyMismatch:
            return ProbeFailure(.networkUnreachable, phase: .connect, detail: error.detail)
        case is NIOSSLError, is BoringSSLError, is NIOSSLExtraError:
            return ProbeFailure(.tlsFailure, phase: .tls, detail: TLSComplaint.words(error))
        case is HTTPResponseReader.Malformed:
            return ProbeFailure(.protocolError, phase: .head, detail: "not an HTTP answer")
        default:
            return ProbeFailure(.protocolError, phase: phase)
        }
    }
}
