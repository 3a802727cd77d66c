/// The status API's version, routes and media types: what a server serves and a client asks for,
/// written down once so that the two cannot drift apart.
///
/// `Sources/ReachAPI/openapi.yaml` describes the same routes for people and other tools; a test
/// holds it to this table and to ``StatusDocument``'s encoder.
package enum StatusAPI {
    /// The version in every route's path. Keys may be added to the documents of one version;
    /// none is renamed, retyped or removed.
    package static let version = "v1"

    /// One route of the API.
    package struct Route: Sendable, Hashable {
        /// The request method, upper case (`GET`, `POST`).
        package let method: String
        /// The path, from the root (`/v1/status`).
        package let path: String
        /// Whether the route answers without the bearer token: liveness checks must work for
        /// anything that watches reachd itself.
        package let isOpen: Bool

        init(_ method: String, _ path: String, isOpen: Bool = false) {
            self.method = method
            self.path = path
            self.isOpen = isOpen
        }
    }

    /// `GET /v1/status`: the verdict as a ``StatusDocument``.
    package static let status = Route("GET", "/\(version)/status")
    /// `GET /v1/events`: every verdict as a Server-Sent Event whose data is a ``StatusDocument``.
    package static let events = Route("GET", "/\(version)/events")
    /// `POST /v1/check`: probe every target now, then the ``StatusDocument``.
    package static let check = Route("POST", "/\(version)/check")
    /// `GET /healthz`: reachd's own liveness, a ``LivenessDocument``.
    package static let liveness = Route("GET", "/healthz", isOpen: true)
    /// `GET /v1/history`: what reachd recorded over a window (``HistoryQuery``), a ``HistoryDocument``.
    package static let history = Route("GET", "/\(version)/history")
    /// `GET /metrics`: Prometheus text exposition.
    package static let metrics = Route("GET", "/metrics")

    /// `GET /`: the status page, HTML for a person. `?token=` once sets the page's cookie.
    package static let page = Route("GET", "/")
    /// `GET /assets/status-page.css`: the page's style sheet; open, as it holds nothing of this machine's.
    package static let pageStyle = Route("GET", "/assets/status-page.css", isOpen: true)
    /// `GET /assets/status-page.js`: the page's script; open, as it holds nothing of this machine's.
    package static let pageScript = Route("GET", "/assets/status-page.js", isOpen: true)

    /// Every route, in the order the documentation lists them.
    package static let routes: [Route] = [
        status, events, check, history, liveness, metrics, page, pageStyle, pageScript,
    ]

    /// The read-only routes a browser may reach with the page's cookie instead of a bearer token:
    /// the page and the documents its script reads. Never a route that acts (`POST /v1/check`).
    package static let pageCookiePaths: Set<String> = [page.path, status.path, events.path, history.path]

    /// The query parameter that hands the page the bearer token once, to keep in its cookie.
    package static let pageTokenQuery = "token"
    /// The media type of the page.
    package static let htmlMediaType = "text/html; charset=utf-8"

    /// The header a client resumes the event stream with.
    package static let lastEventIDHeader = "Last-Event-ID"
    /// The query parameter that does the same for clients that cannot set headers (a browser's `EventSource`).
    package static let lastEventIDQuery = "last_event_id"

    /// The media type of every JSON answer.
    package static let jsonMediaType = "application/json"
    /// The media type of the event stream.
    package static let eventStreamMediaType = "text/event-stream"
    /// The media type of `/metrics`.
    package static let metricsMediaType = "text/plain; version=0.0.4; charset=utf-8"
}
