import ReachAPI
import ReachPOSIX

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

    static func unreachable(_ endpoint: ReachdEndpoint, _ reason: String) -> ReachdClientError {
        ReachdClientError(.unreachable, "cannot reach reachd at \(endpoint.base): \(reason)")
    }

    /// A connection that failed before or during the answer.
    init(_ failure: ReachdConnection.Failure, endpoint: ReachdEndpoint, path: String, silenceLimit: Duration) {
        switch failure {
        case .unreachable(let reason): self = .unreachable(endpoint, reason)
        case .silent: self = .broke(endpoint, path, "it went silent for \(silenceLimit)")
        case .tls(let error): self = .broke(endpoint, path, error.description)
        case .broke(let error): self = .broke(endpoint, path, error.reason)
        case .cancelled: self = .broke(endpoint, path, "cancelled")
        }
    }

    static func timedOut(_ endpoint: ReachdEndpoint, _ limit: Duration) -> ReachdClientError {
        ReachdClientError(.broke, "cannot reach reachd at \(endpoint.base): no answer within \(limit)")
    }

    static func refused(
        _ endpoint: ReachdEndpoint,
        _ method: String,
        _ path: String,
        status: Int,
        reason: String,
        body: [UInt8]
    ) -> ReachdClientError {
        let text = String(decoding: body, as: UTF8.self)
        let message: String
        if let document = try? APIJSON.decode(APIErrorDocument.self, from: text.utf8) {
            message = ": \(document.error)"
        } else {
            message = text.isEmpty ? "" : ": \(text.prefix(200))"
        }
        return ReachdClientError(
            .refused(status: status),
            "reachd at \(endpoint.base) answered \(method) \(path) with \(reason.isEmpty ? "\(status)" : "\(status) \(reason)")\(message)"
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
}
