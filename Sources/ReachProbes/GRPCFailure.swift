import GRPCCore
import NIOCore
import NIOPosix
import ReachCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns what grpc-swift-2 and its NIO transport throw into a ``FailureReason``.
///
/// grpc-swift-2 reports nearly every transport problem as `RPCError(code: .unavailable)`; the
/// actual cause (the errno from `connect(2)`, the resolver's `getaddrinfo` failure, the dropped
/// connection) sits further down the `cause` chain. So the chain is walked and the most specific
/// known cause wins; only when none is recognised does the top-level status code decide.
///
/// What was observed (tests in `GRPCHealthProberTests`, grpcio 1.85.1 health server on Linux,
/// grpc-swift-2 2.4.3, grpc-swift-nio-transport 2.9.2; chains outermost first), and what it maps to:
///
/// | observed | reason, phase |
/// | --- | --- |
/// | closed port: `unavailable` "Could not establish a connection to [ipv4]127.0.0.1:P." ← NIO `IOError` errno 111 `ECONNREFUSED` | `.connectionRefused`, `connect` |
/// | unresolvable name, `.auto`: `unavailable` "Failed to resolve server name" ← `internalError` "Couldn't resolve address for H:P" ← `GetAddrInfoError` "Name or service not known" | `.dnsFailure`, `dns` |
/// | unresolvable name or wrong family, `.ipv4`/`.ipv6` (our own `getaddrinfo`): ``GRPCResolutionError`` "Address family for hostname not supported" / "Name or service not known" | `.dnsFailure`, `dns` |
/// | listener that accepts and never speaks: no error at all, the hard deadline fires | `.timeout`, `head` |
/// | plain HTTP/1.1 server: `unavailable` "The server accepted the TCP connection but closed the connection before completing the HTTP/2 connection preface." ← `NIOHTTP2Errors.UnableToParseFrame` | `.protocolError`, `head` |
/// | gRPC server without the health service: `unimplemented` "Method not found!" | `.protocolError`, `head` |
/// | Check for a service the server does not know: `notFound` (the spec's unary answer for an unknown service) | `.notServing` |
/// | server SIGKILLed under an open Watch: the stream ends with `unavailable` "Stream unexpectedly closed." (no cause) | `.connectionReset` (the watch reports the Check it runs next instead: `ECONNREFUSED`) |
/// | the calling task was cancelled | `.cancelled` |
///
/// Not produced in the tests, mapped by meaning: errnos and NIO channel errors as ``SocketFailure``
/// says for every prober; any other `unavailable` (a connection dropped mid-call) →
/// `.connectionReset`; `deadlineExceeded` → `.timeout`; every other status code → `.protocolError`.
///
/// The detail is in our words, as ``SocketFailure`` says, never the chain's descriptions (those
/// go to the debug log, ``describe(_:)``): the resolver's words for a name, the errno's where
/// they add to the reason, and the status and message the server answered with.
/// Package-visible for the fuzz targets (`FuzzTesting`), which feed it servers' status and message.
package enum GRPCFailure {
    /// Classifies `error`, thrown while the probe was in `phase`.
    package static func classify(_ error: any Error, phase: ProbePhase, taskCancelled: Bool) -> ProbeFailure {
        if taskCancelled {
            return ProbeFailure(.cancelled, phase: phase)
        }
        let causes = chain(of: error)

        // The most specific cause first: walk from the root of the chain up.
        for cause in causes.reversed() {
            if let failure = classifyCause(cause, phase: phase) {
                return failure
            }
        }

        guard let rpcError = causes.lazy.compactMap({ $0 as? RPCError }).first else {
            return ProbeFailure(.protocolError, phase: phase)
        }
        switch rpcError.code {
        case .deadlineExceeded:
            return ProbeFailure(.timeout, phase: phase)
        case .notFound:
            // grpc.health.v1: "If the requested service is unknown, the call will fail with status
            // NOT_FOUND" — the unary form of SERVICE_UNKNOWN.
            let message = rpcError.message.isEmpty ? "" : ": \(rpcError.message)"
            return ProbeFailure(.notServing, phase: nil, detail: "SERVICE_UNKNOWN (NOT_FOUND)\(message)")
        case .unavailable:
            // Connection problems whose root cause is not an errno: the connection was dropped or
            // closed before or during the call.
            return ProbeFailure(.connectionReset, phase: phase)
        case .cancelled:
            return ProbeFailure(.cancelled, phase: phase)
        default:
            // The status the server answered with, and its message.
            return ProbeFailure(.protocolError, phase: phase, detail: "\(rpcError.code): \(rpcError.message)")
        }
    }

    private static func classifyCause(_ cause: any Error, phase: ProbePhase) -> ProbeFailure? {
        if cause is CancellationError {
            return ProbeFailure(.cancelled, phase: phase)
        }
        if let resolution = cause as? GRPCResolutionError {
            return SocketFailure.unresolved("\(resolution.host) (\(resolution.family.rawValue))", resolution.message)
        }
        if String(reflecting: type(of: cause)).hasSuffix("GetAddrInfoError") {
            // The transport's resolver: its description is the resolver's words, and nothing else.
            return ProbeFailure(.dnsFailure, phase: .dns, detail: "\(cause)".lowercased())
        }
        if let ioError = cause as? IOError {
            return SocketFailure.classify(errno: ioError.errnoCode, phase: phase)
        }
        if let channelError = cause as? ChannelError {
            return SocketFailure.classify(channelError, phase: phase)
        }
        if String(reflecting: type(of: cause)).hasPrefix("NIOHTTP2") {
            return ProbeFailure(
                .protocolError,
                phase: phase,
                detail: "the server does not speak HTTP/2: not a gRPC server"
            )
        }
        return nil
    }

    /// The error and its causes, outermost first.
    static func chain(of error: any Error) -> [any Error] {
        var causes: [any Error] = []
        var pending: [any Error] = [error]
        while let next = pending.popLast(), causes.count < 32 {
            causes.append(next)
            if let rpcError = next as? RPCError, let cause = rpcError.cause {
                pending.append(cause)
            } else if let runtimeError = next as? RuntimeError, let cause = runtimeError.cause {
                pending.append(cause)
            } else if let connectionError = next as? NIOConnectionError {
                pending.append(contentsOf: connectionError.connectionErrors.map(\.error).reversed())
                if let dnsError = connectionError.dnsAError { pending.append(dnsError) }
                if let dnsError = connectionError.dnsAAAAError { pending.append(dnsError) }
            }
        }
        return causes
    }

    /// One line for the debug log: each error in the chain, outermost first, as its library
    /// describes it.
    package static func describe(_ error: any Error) -> String {
        chain(of: error).map { cause in
            if let rpcError = cause as? RPCError {
                return "\(rpcError.code): \(rpcError.message)"
            }
            if let runtimeError = cause as? RuntimeError {
                return "\(runtimeError.code): \(runtimeError.message)"
            }
            return String(describing: cause)
        }.joined(separator: " <- ")
    }
}
