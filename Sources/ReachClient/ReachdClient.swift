import ReachAPI
import ReachSupport

/// The one client of reachd's status API, for reachctl, the desktop agent and ReachKit alike:
/// the status, a check, the history, and the event stream, followed across breaks
/// (``follow(backoff:silenceLimit:clock:_:)``).
///
/// It speaks HTTP/1.1 to `http(s)://` endpoints or reachd's unix socket on plain sockets
/// (``ReachdRequest``); every document it reads is decoded through ``ReachAPI``.
package struct ReachdClient: Sendable {
    /// Where reachd is, and its token.
    package let endpoint: ReachdEndpoint
    /// How long to wait for a connection: reachd answers on the same machine or not at all.
    package var connectTimeout: Duration

    /// A client of `endpoint`; nothing connects until a request is made.
    package init(endpoint: ReachdEndpoint, connectTimeout: Duration = .seconds(3)) {
        self.endpoint = endpoint
        self.connectTimeout = connectTimeout
    }

    /// `GET /v1/status`: the verdict now.
    ///
    /// - Throws: ``ReachdClientError``.
    package func status(timeout: Duration = .seconds(10)) async throws(ReachdClientError) -> StatusAnswer {
        try await document(StatusAPI.status, timeout: timeout)
    }

    /// `POST /v1/check`: reachd probes every target now and answers with the new verdict. reachd
    /// waits at most its longest probe timeout plus a second, and never over 30 s, so `timeout`
    /// leaves room for that.
    ///
    /// - Throws: ``ReachdClientError``.
    package func check(timeout: Duration = .seconds(60)) async throws(ReachdClientError) -> StatusAnswer {
        try await document(StatusAPI.check, timeout: timeout)
    }

    /// `GET /v1/history`: what reachd recorded over a window, as ``HistoryQuery/queryString(since:until:target:)``
    /// writes it (`since` a duration such as `24h`, or RFC 3339).
    ///
    /// - Throws: ``ReachdClientError``; `.refused` with reachd's words when history is off (503) or a parameter is wrong (400).
    package func history(
        since: String?,
        until: String? = nil,
        target: String? = nil,
        timeout: Duration = .seconds(30)
    )
        async throws(ReachdClientError) -> HistoryAnswer
    {
        let route = StatusAPI.history
        let json = try await body(
            route,
            query: HistoryQuery.queryString(since: since, until: until, target: target),
            timeout: timeout
        )
        do {
            return HistoryAnswer(document: try APIJSON.decode(HistoryDocument.self, from: json.utf8), json: json)
        } catch {
            throw .notReachd(endpoint, route.path, "not a history document (\(error))")
        }
    }

    /// One status document, whole, within `timeout`.
    private func document(_ route: StatusAPI.Route, timeout: Duration) async throws(ReachdClientError) -> StatusAnswer {
        let json = try await body(route, query: "", timeout: timeout)
        do {
            return StatusAnswer(document: try APIJSON.decode(StatusDocument.self, from: json.utf8), json: json)
        } catch {
            throw .notReachd(endpoint, route.path, "not a status document (\(error))")
        }
    }

    /// One answer's body, whole, within `timeout`.
    private func body(
        _ route: StatusAPI.Route,
        query: String,
        timeout: Duration
    ) async throws(ReachdClientError) -> String {
        let request = ReachdRequest(
            endpoint: endpoint,
            method: route.method,
            path: query.isEmpty ? route.path : "\(route.path)?\(query)",
            headers: [("Accept", StatusAPI.jsonMediaType)],
            connectTimeout: connectTimeout,
            silenceLimit: timeout
        )
        let endpoint = self.endpoint
        let bytes: [UInt8]
        do {
            bytes = try await withDeadline(timeout) {
                var body: [UInt8] = []
                try await request.run { chunk in
                    guard body.count + chunk.count <= EventStreamParser.eventLimit else {
                        throw ReachdClientError.notReachd(
                            endpoint,
                            route.path,
                            "an answer over \(EventStreamParser.eventLimit >> 20) MiB"
                        )
                    }
                    body += chunk
                }
                return body
            }
        } catch let error as ReachdClientError {
            throw error
        } catch is DeadlineExceeded {
            throw .timedOut(endpoint, timeout)
        } catch {
            throw .broke(endpoint, route.path, "\(error)")
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// A history document as reachd sent it: decoded, and the JSON text it came as (`reachctl history --json`).
package struct HistoryAnswer: Sendable {
    package let document: HistoryDocument
    package let json: String
}

/// A status document as reachd sent it: decoded, and the JSON text it came as.
package struct StatusAnswer: Sendable {
    /// The document.
    package let document: StatusDocument
    /// The bytes as received, for a reader that wants them unchanged (`reachctl status --json`).
    package let json: String
}
