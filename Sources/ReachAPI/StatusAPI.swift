/// The status API's version, routes and media types: what a server serves and a client asks for,
/// written down once so that the two cannot drift apart.
///
/// `Sources/ReachAPI/openapi.yaml` describes the same routes for people and other tools; a test
/// holds it to this table and to ``StatusDocument``'s encoder.
public enum StatusAPI {
    /// The version in every route's path. Keys may be added to the documents of one version;
    /// none is renamed, retyped or removed.
    public static let version = "v1"

    /// One route of the API.
    public struct Route: Sendable, Hashable {
        /// The request method, upper case (`GET`, `POST`).
        public let method: String
        /// The path, from the root (`/v1/status`).
        public let path: String
        /// Whether the route answers without the bearer token: liveness checks must work for
        /// anything that watches reachd itself.
        public let isOpen: Bool

        init(_ method: String, _ path: String, isOpen: Bool = false) {
            self.method = method
            self.path = path
            self.isOpen = isOpen
        }
    }

    /// `GET /v1/status`: the verdict as a ``StatusDocument``.
    public static let status = Route("GET", "/\(version)/status")
    /// `GET /v1/events`: every verdict as a Server-Sent Event whose data is a ``StatusDocument``.
    public static let events = Route("GET", "/\(version)/events")
    /// `POST /v1/check`: probe every target now, then the ``StatusDocument``.
    public static let check = Route("POST", "/\(version)/check")
    /// `GET /healthz`: reachd's own liveness, a ``LivenessDocument``.
    public static let liveness = Route("GET", "/healthz", isOpen: true)
    /// `GET /v1/history`: what reachd recorded over a window (``HistoryQuery``), a ``HistoryDocument``.
    public static let history = Route("GET", "/\(version)/history")
    /// `GET /metrics`: Prometheus text exposition.
    public static let metrics = Route("GET", "/metrics")

    /// `GET /`: the status page, HTML for a person. `?token=` once sets the page's cookie.
    public static let page = Route("GET", "/")
    /// `GET /assets/status-page.css`: the page's style sheet; open, as it holds nothing of this machine's.
    public static let pageStyle = Route("GET", "/assets/status-page.css", isOpen: true)
    /// `GET /assets/status-page.js`: the page's script; open, as it holds nothing of this machine's.
    public static let pageScript = Route("GET", "/assets/status-page.js", isOpen: true)

    /// Every route, in the order the documentation lists them.
    public static let routes: [Route] = [status, events, check, history, liveness, metrics, page, pageStyle, pageScript]

    /// The read-only routes a browser may reach with the page's cookie instead of a bearer token:
    /// the page and the documents its script reads. Never a route that acts (`POST /v1/check`).
    public static let pageCookiePaths: Set<String> = [page.path, status.path, events.path, history.path]

    /// The query parameter that hands the page the bearer token once, to keep in its cookie.
    public static let pageTokenQuery = "token"
    /// The media type of the page.
    public static let htmlMediaType = "text/html; charset=utf-8"

    /// The header a client resumes the event stream with.
    public static let lastEventIDHeader = "Last-Event-ID"
    /// The query parameter that does the same for clients that cannot set headers (a browser's `EventSource`).
    public static let lastEventIDQuery = "last_event_id"

    /// The media type of every JSON answer.
    public static let jsonMediaType = "application/json"
    /// The media type of the event stream.
    public static let eventStreamMediaType = "text/event-stream"
    /// The media type of `/metrics`.
    public static let metricsMediaType = "text/plain; version=0.0.4; charset=utf-8"
}
