import NIOCore
import NIOHTTP1
import NIOPosix
import ReachAPI
import ReachPOSIX

#if canImport(Glibc)
import Glibc
#endif

/// Why a request to reachd gave no answer, in words a person can act on: the one description of
/// every way talking to reachd fails, for reachctl's messages and a program's logs alike.
public struct ReachdClientError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, for a program that decides by it.
    public enum Kind: Sendable, Hashable {
        /// The endpoint cannot be used (not an `http://` URL or a socket path, an unreadable token file).
        case endpoint
        /// No connection could be made (refused, no socket, timed out): reachd is not there.
        case unreachable
        /// reachd (or whatever listens there) answered with this HTTP status instead of the document.
        case refused(status: Int)
        /// The answer was not reachd's: not a status document, or an event stream that is not one.
        case notReachd
        /// The connection broke, went silent, or the request ran out of time after it was made.
        case broke
    }

    /// What went wrong.
    public let kind: Kind
    /// The words for it, naming the endpoint.
    public let description: String

    init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }

    static func endpoint(_ error: ReachdEndpointError) -> ReachdClientError {
        ReachdClientError(.endpoint, error.description)
    }

    static func unreachable(_ endpoint: ReachdEndpoint, _ error: any Error) -> ReachdClientError {
        ReachdClientError(.unreachable, "cannot reach reachd at \(endpoint.base): \(reason(error))")
    }

    static func timedOut(_ endpoint: ReachdEndpoint, _ limit: Duration) -> ReachdClientError {
        ReachdClientError(.broke, "cannot reach reachd at \(endpoint.base): no answer within \(limit)")
    }

    static func refused(
        _ endpoint: ReachdEndpoint,
        _ method: String,
        _ path: String,
        _ status: HTTPResponseStatus,
        body: ByteBuffer
    ) -> ReachdClientError {
        let text = String(buffer: body)
        let message: String
        if let document = try? APIJSON.decode(APIErrorDocument.self, from: text.utf8) {
            message = ": \(document.error)"
        } else {
            message = text.isEmpty ? "" : ": \(text.prefix(200))"
        }
        return ReachdClientError(
            .refused(status: Int(status.code)),
            "reachd at \(endpoint.base) answered \(method) \(path) with \(status)\(message)"
        )
    }

    static func notReachd(_ endpoint: ReachdEndpoint, _ path: String, _ why: String) -> ReachdClientError {
        ReachdClientError(.notReachd, "\(endpoint.base)\(path) did not answer as reachd does: \(why)")
    }

    static func broke(_ endpoint: ReachdEndpoint, _ path: String, _ why: String) -> ReachdClientError {
        let what =
            path == StatusAPI.events.path
            ? "the event stream from \(endpoint.base)" : "the answer from \(endpoint.base)\(path)"
        return ReachdClientError(.broke, "\(what) broke: \(why)")
    }

    static func closedStream(_ endpoint: ReachdEndpoint) -> ReachdClientError {
        ReachdClientError(.broke, "reachd at \(endpoint.base) closed the event stream")
    }

    /// A connection error in words: the system's reason for a socket call, or NIO's own for the rest.
    static func reason(_ error: any Error) -> String {
        switch error {
        case ChannelError.connectTimeout: return "connect timed out"
        case HTTPParserError.invalidEOFState: return "reachd closed the connection"
        case let error as HTTPParserError: return "the answer is not HTTP (\(error))"
        case let error as IOError: return SystemCallError.reason(error.errnoCode)
        case let error as NIOConnectionError:
            // One attempt per address tried: the first system error says it.
            if let first = error.connectionErrors.first { return reason(first.error) }
            return error.dnsAAAAError.map(reason) ?? error.dnsAError.map(reason) ?? "no address to connect to"
        default: return "\(error)"
        }
    }
}
