import GRPCCore
import GRPCHealthProto
import GRPCNIOTransportHTTP2
import GRPCProtobuf
import Logging
import NIOCore
import ReachCore
import ReachOutbound
import ReachPOSIX
import ReachSupport

/// Probes a server through the standard gRPC health service, `grpc.health.v1.Health`.
///
/// gRPC servers already tell their load balancers whether they can take calls through this
/// service, so asking it measures what a client of the server would see: the TCP connection, the
/// HTTP/2 handshake and the server's own opinion of its health (`SERVING` or not), not just an open
/// port.
///
/// ### One fresh connection per Check
/// Each ``probe(_:)`` builds its own HTTP/2 transport and client (`withGRPCClient`), makes one
/// `Health/Check` call and closes the connection, the way the Prometheus blackbox exporter does.
/// A reused client would hide exactly what a probe is for: it would keep answering on a
/// connection opened long ago (or quietly reconnect with backoff) while new clients cannot
/// connect, and its reconnect backoff would turn a refused connection into a slow timeout. The
/// cost, one TCP and HTTP/2 handshake per probe (about a millisecond on a LAN), is small at probe
/// cadences of a second or more. ``watch(_:report:)`` is the long-lived counterpart: it holds one
/// `Health/Watch` stream open so that status changes and a broken connection are seen at once.
///
/// ### Address family
/// `.auto` hands the host to gRPC's `.dns(host:port:)` resolution (every family, pick-first).
/// `.ipv4` and `.ipv6` resolve the name with `getaddrinfo` restricted to that family and give the
/// transport only those addresses, so a pinned probe can never succeed over the other family.
///
/// ### TLS
/// A target with `tls` speaks gRPC over TLS, verified as an HTTPS target is (the system store plus
/// its `ca_file`, its `server_name` or host), and its probes keep the chain the server presented,
/// as ``HTTPProber``'s do: see ``GRPCTransportSecurity``. Without `tls` the connection is plaintext.
///
/// ### Calls
/// Calls go out with `waitForReady` off, so a connection that cannot be established fails the
/// call at once with its real cause (`ECONNREFUSED`, ...) instead of waiting out the deadline
/// while the transport retries with backoff. See `GRPCFailure` for how errors map to reasons.
package struct GRPCHealthProber: Prober {
    private let logger: Logger
    /// Made once per CA bundle, as the HTTP prober's are.
    private let tlsContexts = TLSContexts()

    /// The first pause before ``watch(_:report:)`` re-opens a broken stream; doubled after each
    /// attempt that saw no status, up to ``watchReopenCap``.
    static let watchReopenStart: Duration = .milliseconds(100)
    /// The longest pause between two attempts to re-open a watch stream: a restarted server is
    /// seen again within about a second.
    static let watchReopenCap: Duration = .seconds(1)

    package init(logger: Logger) {
        self.logger = logger
    }

    /// One `Health/Check` within `target.timeout` measured from the call.
    ///
    /// The deadline is hard: the call runs in its own task and races a timer, and the result is
    /// returned the moment either finishes. The gRPC call also carries the remaining time as its
    /// own deadline, but that alone is not enough, because the transport's TCP connect cannot be
    /// cancelled (NIO's `connect` waits up to its own 10 s connect timeout); such an abandoned
    /// attempt is cancelled and winds down in the background.
    ///
    /// Never throws: `SERVING` is a success, every other answer and every error is a failure with
    /// a reason, the phase it happened in and the error chain as the detail. When the calling task
    /// is cancelled the result is ``FailureReason/cancelled``.
    package func probe(_ target: ProbeTarget) async -> ProbeResult {
        let start = ContinuousClock.now
        guard case .grpc(let check) = target.check else {
            return .failure(
                target.name,
                .protocolError,
                detail: "not a gRPC health target (\(target.kind))",
                latency: .zero
            )
        }
        let name = target.name
        let timeout = target.timeout
        let family = target.addressFamily
        let security: GRPCTransportSecurity?
        do {
            security = try await transportSecurity(for: check)
        } catch {
            let words = TLSComplaint.words(error) ?? "the trust store cannot be read"
            return .failure(name, .tlsFailure, phase: .tls, detail: "cannot set up TLS: \(words)", latency: .zero)
        }
        let deadline = start.advanced(by: timeout)
        let tracker = GRPCProbePhaseTracker()

        let work = Task {
            await Self.check(
                check,
                family: family,
                security: security,
                deadline: deadline,
                tracker: tracker,
                name: name,
                start: start
            )
        }
        // Once the race is decided, cancelled and left to wind down on its own (see above).
        defer { work.cancel() }
        var result: ProbeResult
        switch await work.value(within: deadline - ContinuousClock.now) {
        case .finished(let checked):
            result = checked
        case .expired:
            result = .failure(
                name,
                .timeout,
                phase: tracker.current,
                detail: "no answer within \(timeout)",
                latency: ContinuousClock.now - start
            )
        case .cancelled:
            result = .failure(name, .cancelled, phase: tracker.current, latency: ContinuousClock.now - start)
        }
        result.certificate = tracker.certificate
        if let failure = result.failure {
            logger.debug(
                "gRPC health check failed",
                metadata: [
                    "target": "\(name)", "endpoint": "\(check.endpoint)", "reason": "\(failure.reason)",
                    "phase": "\(failure.phase?.rawValue ?? "-")", "detail": "\(failure.detail ?? "")",
                ]
            )
        }
        return result
    }

    /// Holds a `Health/Watch` stream open until the calling task is cancelled.
    ///
    /// Every status the server pushes is reported at once (`SERVING` is a success, anything else
    /// ``FailureReason/notServing``), so a server that drains itself is seen in milliseconds rather
    /// than at the next probe. A pushed status has no round trip of its own: its latency is the
    /// time the stream took to deliver its first status.
    ///
    /// When the stream breaks (the server was killed, the connection was reset, the server ended
    /// the call) or delivers no first status within `target.timeout`, the stream alone cannot say
    /// why, so one ``probe(_:)`` runs immediately and its result is reported: a dead server shows up
    /// as `connection_refused` within milliseconds of the break. The stream is then re-opened after
    /// a short pause that starts at 100 ms and doubles up to 1 s while attempts keep failing (a
    /// server without `Watch`, answering `UNIMPLEMENTED`, is thus checked once a second).
    ///
    /// No HTTP/2 keepalive is configured: gRPC servers reject pings more often than every
    /// 5 minutes by default and answer with `GOAWAY`, and the scheduler's regular probes already
    /// catch a path that dies silently. The server's own FIN or RST is what this watch catches.
    ///
    /// The caller decides when a stream is worth holding: the probe scheduler cancels this while
    /// probing is suspended (no usable link, the system asleep), so no re-opening goes on then, and
    /// calls it afresh when the epoch moves on, so a stream that outlived a link flap is replaced.
    ///
    /// `report` is called from this task, one result at a time; it should return quickly. Nothing
    /// is reported after cancellation. Returns at once for a target that is not a gRPC target.
    package func watch(
        _ target: ProbeTarget,
        epoch: @escaping @Sendable () -> ProbeEpoch,
        report: @escaping @Sendable (ProbeResult, ProbeEpoch) -> Void
    ) async {
        guard case .grpc(let check) = target.check else { return }
        // A context that cannot be made fails every Check too, which reports why.
        let security = try? await transportSecurity(for: check)
        if check.tls != nil, security == nil { return }
        var pause = Self.watchReopenStart
        while !Task.isCancelled {
            let streamEpoch = epoch()
            let sawStatus = await holdWatchStream(target, check: check, security: security) { report($0, streamEpoch) }
            if Task.isCancelled { return }
            let checkEpoch = epoch()
            let result = await probe(target)
            if Task.isCancelled { return }
            report(result, checkEpoch)
            if sawStatus { pause = Self.watchReopenStart }
            do {
                try await Task.sleep(for: pause)
            } catch {
                return
            }
            pause = min(pause * 2, Self.watchReopenCap)
        }
    }

    // MARK: - Check

    /// The target's TLS, its context made once per CA bundle; `nil` for plaintext.
    private func transportSecurity(for check: GRPCHealthCheck) async throws -> GRPCTransportSecurity? {
        guard let settings = check.tls else { return nil }
        let context = try await tlsContexts.context(
            caFile: settings.caFile,
            applicationProtocols: GRPCTransportSecurity.applicationProtocols
        )
        return GRPCTransportSecurity(context: context, settings: settings, endpoint: check.endpoint)
    }

    private static func check(
        _ check: GRPCHealthCheck,
        family: AddressFamily,
        security: GRPCTransportSecurity?,
        deadline: ContinuousClock.Instant,
        tracker: GRPCProbePhaseTracker,
        name: String,
        start: ContinuousClock.Instant
    ) async -> ProbeResult {
        do {
            let response = try await withHealthClient(
                check.endpoint,
                family: family,
                security: security,
                tracker: tracker
            ) { health in
                var options = CallOptions.defaults
                options.timeout = max(deadline - ContinuousClock.now, .milliseconds(1))
                options.waitForReady = false
                return try await health.check(request: ClientRequest(message: request(for: check)), options: options)
            }
            tracker.advance(to: .body)
            return result(for: response.status, target: name, latency: ContinuousClock.now - start)
        } catch {
            // The transport says only that the connection closed; the handshake's watcher knows why.
            let failure = Task.isCancelled ? nil : tracker.tlsFailure
            var classified =
                failure ?? GRPCFailure.classify(error, phase: tracker.current, taskCancelled: Task.isCancelled)
            if let certificate = tracker.certificate {
                classified = TLSComplaint.explained(classified, presenting: certificate, now: .now())
            }
            return ProbeResult(
                target: name,
                failure: classified,
                timings: ProbeTimings(total: ContinuousClock.now - start)
            )
        }
    }

    // MARK: - Watch

    private enum WatchEvent: Sendable {
        case status(Grpc_Health_V1_HealthCheckResponse.ServingStatus)
        case ended((any Error)?)
        /// `target.timeout` passed; meaningful only while no status has arrived.
        case silent
    }

    /// Opens one Watch stream and reports what it delivers until it ends or the task is cancelled.
    /// Returns whether any status arrived.
    private func holdWatchStream(
        _ target: ProbeTarget,
        check: GRPCHealthCheck,
        security: GRPCTransportSecurity?,
        report: @escaping @Sendable (ProbeResult) -> Void
    ) async -> Bool {
        let start = ContinuousClock.now
        let family = target.addressFamily
        let (events, continuation) = AsyncStream.makeStream(of: WatchEvent.self)

        // Unstructured like the Check's race: a connect that NIO cannot cancel must not hold up
        // the report that the stream failed to open.
        let stream = Task {
            do {
                try await Self.withHealthClient(
                    check.endpoint,
                    family: family,
                    security: security,
                    tracker: GRPCProbePhaseTracker()
                ) { health in
                    var options = CallOptions.defaults
                    options.waitForReady = false
                    try await health.watch(request: ClientRequest(message: Self.request(for: check)), options: options)
                    { response in
                        for try await message in response.messages {
                            continuation.yield(.status(message.status))
                        }
                    }
                }
                continuation.yield(.ended(nil))
            } catch {
                continuation.yield(.ended(error))
            }
        }
        let silence = Task.after(target.timeout) { continuation.yield(.silent) }
        defer {
            stream.cancel()
            silence.cancel()
            continuation.finish()
        }

        var streamLatency: Duration?
        for await event in events {
            switch event {
            case .status(let status):
                let latency = streamLatency ?? (ContinuousClock.now - start)
                if streamLatency == nil {
                    streamLatency = latency
                    silence.cancel()
                }
                report(Self.result(for: status, target: target.name, latency: latency))
            case .ended(let error):
                logger.debug(
                    "gRPC health watch ended",
                    metadata: [
                        "target": "\(target.name)", "endpoint": "\(check.endpoint)",
                        "error": "\(error.map { GRPCFailure.describe($0) } ?? "none: the server ended the call")",
                    ]
                )
                return streamLatency != nil
            case .silent:
                if streamLatency == nil {
                    logger.debug(
                        "gRPC health watch delivered no status in time",
                        metadata: [
                            "target": "\(target.name)", "endpoint": "\(check.endpoint)", "timeout": "\(target.timeout)",
                        ]
                    )
                    return false
                }
            }
        }
        return streamLatency != nil
    }

    // MARK: - Shared

    private static func request(for check: GRPCHealthCheck) -> Grpc_Health_V1_HealthCheckRequest {
        var request = Grpc_Health_V1_HealthCheckRequest()
        request.service = check.service
        return request
    }

    /// `SERVING` is healthy; `NOT_SERVING`, `SERVICE_UNKNOWN`, `UNKNOWN` and values newer than this
    /// proto are all the server's own word that it cannot serve: ``FailureReason/notServing``.
    /// Package-visible for the fuzz targets (`FuzzTesting`), which feed it decoded server answers.
    package static func result(
        for status: Grpc_Health_V1_HealthCheckResponse.ServingStatus,
        target: String,
        latency: Duration
    ) -> ProbeResult {
        switch status {
        case .serving:
            .success(target, latency: latency)
        case .notServing:
            .failure(target, .notServing, detail: "NOT_SERVING", latency: latency)
        case .serviceUnknown:
            .failure(target, .notServing, detail: "SERVICE_UNKNOWN", latency: latency)
        case .unknown:
            .failure(target, .notServing, detail: "UNKNOWN", latency: latency)
        case .UNRECOGNIZED(let value):
            .failure(target, .notServing, detail: "unrecognised serving status \(value)", latency: latency)
        }
    }

    /// Runs `body` with a health client on a fresh HTTP/2 connection to `endpoint` (over TLS with
    /// `security`, else plaintext), closed when `body` returns.
    private static func withHealthClient<Result: Sendable>(
        _ endpoint: HostPort,
        family: AddressFamily,
        security: GRPCTransportSecurity?,
        tracker: GRPCProbePhaseTracker,
        _ body: (Grpc_Health_V1_Health.Client<HTTP2ClientTransport.Posix>) async throws -> Result
    ) async throws -> Result {
        let transport = try await makeTransport(endpoint, family: family, security: security, tracker: tracker)
        return try await withGRPCClient(transport: transport) { client in
            try await body(Grpc_Health_V1_Health.Client(wrapping: client))
        }
    }

    private static func makeTransport(
        _ endpoint: HostPort,
        family: AddressFamily,
        security: GRPCTransportSecurity?,
        tracker: GRPCProbePhaseTracker
    ) async throws -> HTTP2ClientTransport.Posix {
        var config = HTTP2ClientTransport.Posix.Config.defaults
        if let security {
            // The TLS handlers go in here; their watcher moves the phase to `tls`, then `head`.
            config.channelDebuggingCallbacks.onCreateTCPConnection = { channel in
                security.install(on: channel, tracker: tracker)
            }
        } else {
            // Called once the TCP connection is up: from here on the probe waits for the server's
            // HTTP/2 settings and the answer, so a timeout now means a server that does not speak.
            config.channelDebuggingCallbacks.onCreateTCPConnection = { channel in
                tracker.advance(to: .head)
                return channel.eventLoop.makeSucceededVoidFuture()
            }
        }
        var registry = NameResolverRegistry.defaults
        let resolvable: any ResolvableTarget
        switch family {
        case .auto:
            registry.registerFactory(GRPCPhaseTrackingDNSResolverFactory())
            resolvable = GRPCPhaseTrackingDNSTarget(
                dns: ResolvableTargets.DNS(host: endpoint.host, port: endpoint.port),
                tracker: tracker
            )
        case .ipv4:
            let addresses = try await GRPCAddressResolver.resolve(host: endpoint.host, family: .ipv4)
            resolvable = ResolvableTargets.IPv4(addresses: addresses.map { .init(host: $0, port: endpoint.port) })
            config.http2.authority = endpoint.description
            tracker.advance(to: .connect)
        case .ipv6:
            let addresses = try await GRPCAddressResolver.resolve(host: endpoint.host, family: .ipv6)
            resolvable = ResolvableTargets.IPv6(addresses: addresses.map { .init(host: $0, port: endpoint.port) })
            config.http2.authority = endpoint.description
            tracker.advance(to: .connect)
        }
        return try HTTP2ClientTransport.Posix(
            target: resolvable,
            transportSecurity: security == nil ? .plaintext : .customSecure,
            config: config,
            resolverRegistry: registry
        )
    }
}
