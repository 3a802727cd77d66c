import HTTPTypes
import Hummingbird
import ReachAPI
import ReachCore
import ReachMetrics
import ReachPOSIX
import ReachSupport

/// The route handlers of ``StatusServer``, each a thin translation from the monitor to HTTP.
struct StatusRoutes: Sendable {
    let monitor: ConnectivityMonitor
    let metrics: ReachMetrics
    let events: EventStream
    /// How long a check waits for fresh results, asked at each check (a reload changes it).
    let checkWaitLimit: @Sendable () -> Duration
    let history: (any HistoryReading)?
    /// The longest `/healthz` waits for the monitor to answer before calling reachd unhealthy.
    var livenessLimit: Duration = .seconds(1)

    /// `GET /v1/status`.
    func status() -> Response {
        JSONBody.response(document(monitor.current))
    }

    /// `GET /v1/events`; resumes after `Last-Event-ID` (or `?last_event_id=`, for clients that
    /// cannot set headers, like a browser's `EventSource` on its first connection).
    func events(_ request: Request) throws -> Response {
        events.response(resumingAfter: try Self.lastEventID(request))
    }

    /// `POST /v1/check`.
    func check() async -> Response {
        JSONBody.response(document(await ImmediateCheck(monitor: monitor, waitLimit: checkWaitLimit()).run()))
    }

    /// `GET /v1/history`: `400` for a parameter that is not what it must be, `503` without history.
    func history(_ request: Request) async throws -> Response {
        let parameters = request.uri.queryParameters
        let query: HistoryQuery
        do {
            query = try HistoryQuery(
                since: parameters.get("since"),
                until: parameters.get("until"),
                target: parameters.get("target"),
                now: WallTime.now()
            )
        } catch {
            throw APIError(.badRequest, error.description)
        }
        guard let history else { throw APIError(.serviceUnavailable, "history is off (history.enabled: false)") }
        do {
            return JSONBody.response(try await history.history(query))
        } catch let error as HistoryUnavailable {
            throw APIError(.serviceUnavailable, error.reason)
        }
    }

    /// `GET /healthz`: reachd's own liveness, not the machine's connectivity: a disconnected
    /// reachd is a healthy one. Healthy when this handler runs (the event loop answers) and the
    /// monitor answers a read in time (its lock is not stuck).
    func health() async -> Response {
        let monitor = self.monitor
        let limit = livenessLimit
        // Unstructured on purpose: a read that never returns must not hold this request.
        let read = Task.detached { _ = monitor.current }
        guard case .finished = await read.value(within: limit) else {
            return APIError(.serviceUnavailable, "the connectivity monitor did not answer within \(limit)").response
        }
        return JSONBody.response(LivenessDocument.ok)
    }

    /// `GET /metrics`.
    func prometheus() -> Response {
        Response(
            status: .ok,
            headers: [.contentType: StatusAPI.metricsMediaType],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.exposition(monitor: monitor)))
        )
    }

    private func document(_ event: ConnectivityEvent) -> StatusDocument {
        StatusDocument(event: event, likelyConnected: monitor.isLikelyConnected)
    }

    private static let lastEventIDField = HTTPField.Name(StatusAPI.lastEventIDHeader)!

    /// The resume point, if the client sent one; an empty value means none, as in the SSE spec.
    static func lastEventID(_ request: Request) throws -> UInt64? {
        let text = request.headers[lastEventIDField] ?? request.uri.queryParameters.get(StatusAPI.lastEventIDQuery)
        guard let text, !text.isEmpty else { return nil }
        guard let sequence = UInt64(text) else {
            throw APIError(
                .badRequest,
                "Last-Event-ID must be an event id (a non-negative integer), got \"\(text.prefix(64))\""
            )
        }
        return sequence
    }
}
