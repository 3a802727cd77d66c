import HTTPTypes
import Hummingbird
import ReachAPI
import ReachCore
import ReachPOSIX
import ReachStatusPage
import ReachSupport

/// `GET /` and the page's assets: the status page rendered when a browser asks for it and at no
/// other time, so it costs the daemon nothing while nobody looks.
struct StatusPageRoutes: Sendable {
    let monitor: ConnectivityMonitor
    /// The history the page shows; `nil` when reachd keeps none (the page then says so).
    let history: (any HistoryReading)?

    /// `GET /`: the verdict now, and the last ``ReachStatusPage/PageHistory/span`` of history when
    /// reachd keeps one and can read it (else the page says there is none).
    func page() async -> Response {
        let now = WallTime.now()
        let status = StatusDocument(event: monitor.current, likelyConnected: monitor.isLikelyConnected)
        let window = WallTime(sinceEpoch: now.sinceEpoch - PageHistory.span)..<now
        let document = try? await history?.history(HistoryQuery(window: window))
        let html = StatusPage(status: status, history: document.map { PageHistory(document: $0, now: now) }, now: now)
            .html
        return Self.response(html, type: StatusAPI.htmlMediaType, cache: "no-store")
    }

    /// `GET /assets/status-page.css`.
    static func style() -> Response {
        response(StatusPageAssets.style, type: "text/css; charset=utf-8", cache: "no-cache")
    }

    /// `GET /assets/status-page.js`.
    static func script() -> Response {
        response(StatusPageAssets.script, type: "text/javascript; charset=utf-8", cache: "no-cache")
    }

    private static let referrerPolicy = HTTPField.Name("Referrer-Policy")!

    private static func response(_ text: String, type: String, cache: String) -> Response {
        Response(
            status: .ok,
            headers: [
                .contentType: type, .cacheControl: cache,
                .contentSecurityPolicy: StatusPageAssets.contentSecurityPolicy,
                .xContentTypeOptions: "nosniff", referrerPolicy: "no-referrer",
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text))
        )
    }
}
