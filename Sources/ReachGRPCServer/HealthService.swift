import GRPCCore
import GRPCHealthProto
import ReachCore
import ReachSupport

/// The standard gRPC health service, `grpc.health.v1.Health`, answered from a
/// ``ConnectivityMonitor``'s verdict, so that any gRPC tooling (`grpc_health_probe`, Kubernetes
/// gRPC probes, Envoy and other load balancers) can ask reachd whether this machine is connected
/// without learning reachd's own API.
///
/// ### Service names
/// - `""`, the server as a whole, is the unified verdict: `connected` is `SERVING`,
///   `disconnected` is `NOT_SERVING`, and `unknown` (just started, no evidence yet) is `UNKNOWN`.
///   `UNKNOWN` rather than `NOT_SERVING` because it is the truth: reachd has not yet seen the
///   network fail, it has not looked. Every health client treats anything but `SERVING` as not
///   ready, so gating on it is as safe as `NOT_SERVING`, while a watcher can tell a daemon that is
///   still starting from a machine that lost its connection.
/// - Each probe target's name is a service of its own: `healthy` is `SERVING`, `unhealthy` is
///   `NOT_SERVING`, `unknown` (no result yet on the current link) is `UNKNOWN`. Should a target be
///   named `""`, the unified verdict wins.
/// - Any other name is unknown: `Check` fails with `NOT_FOUND` and `Watch` sends
///   `SERVICE_UNKNOWN` and keeps watching, as the health-checking protocol asks.
///
/// ### Watch
/// A watch sends the current status at once and then each change of that one service's status,
/// derived from the monitor's event stream. Each write waits for HTTP/2 flow control, so a slow
/// client holds up only its own watch; meanwhile the monitor's subscription buffer, which is
/// bounded, drops the oldest events. Since every event carries the whole verdict, the status
/// computed from the latest one is still right: a slow client sees fewer intermediate changes,
/// never a wrong status, and costs no more memory.
/// Watches end (status `OK`) when ``drain()`` is called or the monitor stops running.
struct HealthService: Grpc_Health_V1_Health.SimpleServiceProtocol {
    typealias Status = Grpc_Health_V1_HealthCheckResponse.ServingStatus

    let monitor: ConnectivityMonitor
    private let draining = OneShotSignal()

    init(monitor: ConnectivityMonitor) {
        self.monitor = monitor
    }

    /// Ends every open `Watch` (and any opened later) with status `OK`, so a graceful shutdown of
    /// the server is not held up by streams that would otherwise never end.
    func drain() {
        draining.fire()
    }

    // MARK: - Mapping

    /// The status of `service` under `verdict`; `nil` when the verdict knows no such service.
    static func status(of service: String, in verdict: Verdict) -> Status? {
        if service.isEmpty {
            return switch verdict.state {
            case .connected: .serving
            case .disconnected: .notServing
            case .unknown: .unknown
            }
        }
        guard let target = verdict.targets.first(where: { $0.name == service }) else { return nil }
        return switch target.health {
        case .healthy: .serving
        case .unhealthy: .notServing
        case .unknown: .unknown
        }
    }

    /// Every service the verdict knows, with its status.
    static func statuses(in verdict: Verdict) -> [String: Status] {
        var statuses: [String: Status] = [:]
        for target in verdict.targets {
            statuses[target.name] = status(of: target.name, in: verdict)
        }
        statuses[""] = status(of: "", in: verdict)
        return statuses
    }

    private static func response(_ status: Status) -> Grpc_Health_V1_HealthCheckResponse {
        var response = Grpc_Health_V1_HealthCheckResponse()
        response.status = status
        return response
    }

    // MARK: - RPCs

    func check(
        request: Grpc_Health_V1_HealthCheckRequest,
        context: ServerContext
    ) async throws -> Grpc_Health_V1_HealthCheckResponse {
        guard let status = Self.status(of: request.service, in: monitor.current.verdict) else {
            throw RPCError(code: .notFound, message: "unknown service \(request.service.debugDescription)")
        }
        return Self.response(status)
    }

    func list(
        request: Grpc_Health_V1_HealthListRequest,
        context: ServerContext
    ) async throws -> Grpc_Health_V1_HealthListResponse {
        var response = Grpc_Health_V1_HealthListResponse()
        response.statuses = Self.statuses(in: monitor.current.verdict).mapValues(Self.response)
        return response
    }

    func watch(
        request: Grpc_Health_V1_HealthCheckRequest,
        response: RPCWriter<Grpc_Health_V1_HealthCheckResponse>,
        context: ServerContext
    ) async throws {
        let service = request.service
        let monitor = monitor
        let draining = draining
        // The two children race: the stream of changes ends only with the monitor, the drain
        // signal when the server shuts down; whichever finishes first ends the call.
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                var last: Status?
                // The subscription yields the current verdict first, then every change.
                for await event in monitor.subscribe() {
                    let status = Self.status(of: service, in: event.verdict) ?? .serviceUnknown
                    if status == last { continue }
                    last = status
                    try await response.write(Self.response(status))
                }
            }
            group.addTask {
                await draining.wait()
            }
            try await group.next()
            group.cancelAll()
        }
    }
}
