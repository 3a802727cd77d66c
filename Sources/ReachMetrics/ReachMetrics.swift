import Logging
import Prometheus
import ReachCore
import ReachSupport
import Synchronization

/// reachd's Prometheus metrics: the verdict, link and probe health, callbacks and subscribers,
/// so that dashboards and alerts see what reachd sees.
///
/// It owns its `PrometheusCollectorRegistry` (no global `MetricsSystem` bootstrap: the registry is
/// the one source of truth and tests can make as many as they like). It is fed from three places:
/// - the monitor, by ``follow(_:)`` — the verdict, state changes and callback outcomes;
/// - the probe scheduler, as its ``ReachCore/ProbeObserver`` — every probe's result and duration;
/// - the daemon, through ``update(links:)`` and ``setNetlinkOverruns(_:)``.
///
/// Every series with a bounded label set exists from the start (value 0): each target's success,
/// duration and every result of `reachd_probes_total`, and every `{to, reason}` pair of
/// `reachd_state_changes_total`. A target that has never been probed shows up as such rather than
/// as a missing series that alerts cannot see, and `increase()` counts the first failure too (a
/// counter series born at 1 has no earlier sample, so its first increment is invisible to it).
package final class ReachMetrics: ProbeObserver, Sendable {
    /// The registry every metric is registered on; ``exposition(monitor:)`` renders it.
    package let registry: PrometheusCollectorRegistry

    private let connected: Gauge
    private let linkUsable: Gauge
    private let subscribers: Gauge
    private let lastTransition: Gauge
    /// `reachd_fault{fault}`: a state set, one series per fault and `none`, exactly one of them 1.
    private let faults: [String: Gauge]
    /// `reachd_interface_reachable`, per uplink probed on its own.
    private let interfaceSeries = InterfaceSeries()
    /// `reachd_quality` and the targets' quality series, sampled at each scrape.
    private let qualitySeries: QualitySeries
    private let netlinkOverruns: Counter
    private let heapTrims: Counter
    private let state = Mutex(State())

    /// The per-target series made at startup.
    private struct TargetSeries: Sendable {
        let success: Gauge
        let duration: DurationHistogram
        let succeeded: Counter
        let skipped: Counter
        /// `reachd_failing_target`: 1 while this target's failure is the verdict's reason.
        let failing: Gauge
        /// `reachd_probes_total{result=…}` for every failure reason code.
        let failed: [String: Counter]
        /// `reachd_icmp_echoes_sent_total` and `_received_total`, for an `icmp` target.
        let echoes: (sent: Counter, received: Counter)?
    }

    private struct LinkSeries {
        var kind: String
        var gauge: Gauge
    }

    private struct State {
        var lastState: ConnectivityState?
        var netlinkOverrunsSeen = 0
        var netlinkOverrunSource: (@Sendable () -> Int)?
        /// Set once the daemon reports complete link snapshots: they replace the verdict's list.
        var linksReported = false
        var links: [String: LinkSeries] = [:]
        /// Per-target series, one for each configured target.
        var targets: [String: TargetSeries] = [:]
        /// Which interfaces get a `reachd_link_up` series.
        var interfaces = InterfaceFilter()
        /// `reachd_captive_portal` per interface: the usable ones, and the one behind a portal.
        var portals: [String: Gauge] = [:]
        /// `reachd_target_certificate_expiry_timestamp_seconds`, per target that presented a certificate.
        var certificateExpiries: [String: Gauge] = [:]
    }

    /// The upper bounds of `reachd_probe_duration_seconds`: a loopback probe to a slow TLS handshake.
    static let probeDurationBuckets: [Duration] = [
        .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .milliseconds(2500),
    ]

    /// - Parameters:
    ///   - targets: The configured targets: each gets its series now.
    ///   - version: Reported as `reachd_build_info{version}`.
    /// - Parameter interfaces: Which interfaces get a `reachd_link_up` series: the same filter
    ///   the verdict uses, so that a container host's stream of `veth…` names does not become an
    ///   unbounded stream of series.
    package init(
        targets: [ProbeTarget],
        interfaces: InterfaceFilter = InterfaceFilter(),
        version: String = ReachVersion.current,
        registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()
    ) {
        self.registry = registry
        connected = registry.makeGauge(descriptor: Self.connectedName)
        linkUsable = registry.makeGauge(descriptor: Self.linkUsableName)
        subscribers = registry.makeGauge(descriptor: Self.subscribersName)
        lastTransition = registry.makeGauge(descriptor: Self.lastTransitionName)
        netlinkOverruns = registry.makeCounter(descriptor: Self.netlinkOverrunsName)
        heapTrims = registry.makeCounter(descriptor: Self.heapTrimsName)
        faults = Dictionary(
            uniqueKeysWithValues: ([Self.noFault] + Fault.allCases.map(\.code)).map { fault in
                (fault, registry.makeGauge(descriptor: Self.faultName, labels: [("fault", fault)]))
            }
        )
        faults[Self.noFault]?.set(to: 1)
        qualitySeries = QualitySeries(in: registry)
        registry.makeGauge(descriptor: Self.buildInfoName, labels: [("version", version)]).set(to: 1)
        for outcome in [CallbackReport.Outcome.succeeded, .failed(""), .timedOut, .cancelled, .skipped] {
            _ = registry.makeCounter(descriptor: Self.restorationCallbacksName, labels: [("result", outcome.code)])
        }
        for (to, reason, fault) in Self.stateChangeLabels {
            _ = registry.makeCounter(
                descriptor: Self.stateChangesName,
                labels: [("to", to), ("reason", reason), ("fault", fault)]
            )
        }
        reconfigure(targets: targets, interfaces: interfaces)
    }

    /// Every failure reason a probe result can count under (a cancelled probe is never counted).
    static let failureReasons: [FailureReason] =
        [
            .dnsFailure, .connectionRefused, .timeout, .tlsFailure, .httpStatus(0), .unexpectedBody,
            .networkUnreachable, .connectionReset, .protocolError, .notServing,
        ] + dnsFailureReasons + icmpFailureReasons
    /// What only a `dns` target fails with, and what only an `icmp` target does.
    static let dnsFailureReasons: [FailureReason] = [
        .nxdomain, .servfail, .dnsRefused, .noResolver, .truncatedAnswer, .malformedAnswer, .unexpectedAnswer,
    ]
    static let icmpFailureReasons: [FailureReason] = [.notPermitted, .destinationUnreachable, .timeExceeded]
    static let failureCodes: [String] = failureReasons.map(\.code)

    /// The failure codes a target of `kind` can count under, each with a series from the start
    /// (another code, should it come, gets its series then).
    static func failureCodes(ofKind kind: String) -> [String] {
        let reasons: [FailureReason] =
            switch kind {
            case "dns":
                [.timeout, .connectionRefused, .networkUnreachable, .connectionReset, .protocolError]
                    + dnsFailureReasons
            case "icmp": [.dnsFailure, .timeout, .networkUnreachable] + icmpFailureReasons
            default: Array(failureReasons.prefix(10))
            }
        return reasons.map(\.code)
    }

    /// Every `{to, reason, fault}` a state change can carry: `connected` is always `healthy` with
    /// fault `none`; a disconnection names the link's blocker (fault `link`), a portal (`portal`),
    /// `awaiting_probe` (`none`) or a failure reason with each fault the path evidence can give it
    /// (``ReachCore/Fault/init(_:evidence:)``), or none while it is not known yet: 25 series, a bounded set.
    static let stateChangeLabels: [(to: String, reason: String, fault: String)] = {
        let disconnected = ConnectivityState.disconnected.rawValue
        var labels = [(ConnectivityState.connected.rawValue, VerdictReason.healthy.code, noFault)]
        for reason in [VerdictReason.noLink, .noAddress, .noRoute, .captivePortal, .awaitingProbe] {
            labels.append((disconnected, reason.code, Fault(reason)?.code ?? noFault))
        }
        let gateways: [GatewayFinding?] = [nil, false, true].map { answers in
            answers.map {
                GatewayFinding(interface: "", address: IPAddress("192.0.2.1")!, answers: $0, evidence: .echo)
            }
        }
        // No round yet (the fault not known), then every round there can be.
        let rounds: [PathEvidenceRound?] =
            [nil]
            + gateways.flatMap { gateway in
                [nil, UpstreamFinding.answers, .unreachable].map { PathEvidenceRound(gateway: gateway, upstream: $0) }
            }
        for failure in failureReasons {
            var faults: [String] = []
            for round in rounds {
                let fault = Fault(.targetFailed(target: "", reason: failure), evidence: round)
                // A dns target's `server` is its resolver's: `dns`.
                for kind in ["", "dns"] where kind.isEmpty || failureCodes(ofKind: "dns").contains(failure.code) {
                    let code = Fault.of(fault, kind: kind)?.code ?? noFault
                    if !faults.contains(code) { faults.append(code) }
                }
            }
            labels += faults.map { (disconnected, failure.code, $0) }
        }
        return labels
    }()

    /// The `fault` label of a verdict that has none (connected, awaiting a probe).
    static let noFault = "none"

    // MARK: Feeding

    /// Follows the monitor's verdicts and callback reports until the calling task is cancelled or
    /// the monitor stops. Run it as a service of its own next to the monitor (wrapped in
    /// `cancelOnGracefulShutdown`, as it has nothing to flush).
    ///
    /// It reads a subscription like any other, so in a burst of changes faster than it keeps up
    /// with it may skip intermediate verdicts; `reachd_state_changes_total` then counts the
    /// changes between the verdicts it saw.
    package func follow(_ monitor: ConnectivityMonitor) async {
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await event in monitor.subscribe() { self.record(event) }
            }
            group.addTask {
                for await report in monitor.callbackReports() { self.record(report) }
            }
        }
    }

    /// Takes a complete link snapshot (what the link source gives the monitor) so that
    /// `reachd_link_up` covers every interface, usable or not. Until the first call, it lists the
    /// verdict's usable interfaces with kind `unknown`.
    package func update(links snapshot: LinkSnapshot) {
        state.withLock { state in
            state.linksReported = true
            var up: [String: (kind: String, value: Double)] = [:]
            for interface in snapshot.interfaces
            where interface.kind != .loopback && state.interfaces.admits(interface.name) {
                up[interface.name] = (interface.kind.rawValue, interface.isAdminUp && interface.hasCarrier ? 1 : 0)
            }
            setLinks(up, removingOthers: true, in: &state)
        }
    }

    /// Takes the netlink socket's running count of receive-buffer overruns (each one cost a full
    /// re-dump of the link table). A count lower than the last one means the source restarted.
    package func setNetlinkOverruns(_ total: Int) {
        let increase = state.withLock { state in
            defer { state.netlinkOverrunsSeen = total }
            return total - state.netlinkOverrunsSeen
        }
        if increase > 0 { netlinkOverruns.increment(by: Int64(increase)) }
    }

    /// Counts `reachd_heap_trims_total`: the status server returned departed clients' heap to the
    /// kernel. A resident size read after it is what reachd keeps, not what a crowd left in the arenas.
    package func countHeapTrim() {
        heapTrims.increment()
    }

    /// Renders every metric in the Prometheus text format (0.0.4), first reading the values that
    /// are only sampled at scrape time.
    package func exposition(monitor: ConnectivityMonitor) -> [UInt8] {
        subscribers.set(to: Double(monitor.subscriberCount))
        if let overruns = state.withLock({ $0.netlinkOverrunSource }) { setNetlinkOverruns(overruns()) }
        qualitySeries.record(monitor.current.verdict, in: registry)
        // The state sets (`reachd_fault`, `reachd_failing_target`) change under this lock.
        return state.withLock { _ in registry.emitToBuffer() }
    }

    /// Reads the netlink socket's running overrun count at every scrape: an overrun burst that
    /// ends where it began changes no snapshot, so counting only with snapshots would miss it.
    package func sampleNetlinkOverruns(from total: @escaping @Sendable () -> Int) {
        state.withLock { $0.netlinkOverrunSource = total }
    }

    func record(_ event: ConnectivityEvent) {
        let verdict = event.verdict
        let fault = verdict.fault?.code ?? Self.noFault
        let failingTarget = verdict.state == .disconnected ? verdict.reason.target : nil
        // Under the lock that exposition holds: a scrape sees one verdict whole (one fault at 1,
        // never two or none; a portal's gauge with the state change it caused), never half of two.
        state.withLock { state in
            connected.set(to: verdict.state == .connected ? 1 : 0)
            linkUsable.set(to: verdict.usableInterfaces.isEmpty ? 0 : 1)
            lastTransition.set(to: verdict.since.secondsSinceEpoch)
            interfaceSeries.record(verdict.interfaces, in: registry)
            for (code, gauge) in faults { gauge.set(to: code == fault ? 1 : 0) }
            for (name, series) in state.targets { series.failing.set(to: name == failingTarget ? 1 : 0) }
            defer { state.lastState = verdict.state }
            if !state.linksReported {
                var up: [String: (kind: String, value: Double)] = [:]
                for name in state.links.keys { up[name] = ("unknown", 0) }
                for name in verdict.usableInterfaces { up[name] = ("unknown", 1) }
                setLinks(up, removingOthers: false, in: &state)
            }
            setPortals(verdict, in: &state)
            if let last = state.lastState, last != verdict.state {
                let labels = [("to", verdict.state.rawValue), ("reason", verdict.reason.code), ("fault", fault)]
                registry.makeCounter(descriptor: Self.stateChangesName, labels: labels).increment()
            }
        }
    }

    func record(_ report: CallbackReport) {
        guard report.direction == .restored else { return }
        registry.makeCounter(descriptor: Self.restorationCallbacksName, labels: [("result", report.outcome.code)])
            .increment()
    }

    // MARK: ProbeObserver

    /// Counts the result, times the probe and sets the target's success gauge, and its certificate's
    /// expiry when it presented one. A cancelled probe (reachd stopping, or a reload replacing the
    /// schedule) learned nothing and is not counted, nor is a result for a target a reload removed.
    package func probeFinished(_ target: ProbeTarget, result: ProbeResult) {
        guard result.failure?.reason != .cancelled, let series = series(for: target.name) else { return }
        series.success.set(to: result.isSuccess ? 1 : 0)
        count(result, in: series, of: target)
        if let echoes = result.echoes, let counters = series.echoes {
            counters.sent.increment(by: Int64(echoes.sent))
            counters.received.increment(by: Int64(echoes.received))
        }
        if let certificate = result.certificate { setCertificateExpiry(certificate, of: target.name) }
    }

    /// Sets `reachd_target_certificate_expiry_timestamp_seconds{target}`: the series exists only for
    /// targets that presented a certificate, as blackbox_exporter's `probe_ssl_earliest_cert_expiry`
    /// does only for TLS probes, and keeps the last date seen while the server is away.
    private func setCertificateExpiry(_ certificate: ServerCertificate, of name: String) {
        let gauge = state.withLock { state -> Gauge? in
            guard state.targets[name] != nil else { return nil }
            if let gauge = state.certificateExpiries[name] { return gauge }
            let gauge = registry.makeGauge(descriptor: Self.certificateExpiryName, labels: [("target", name)])
            state.certificateExpiries[name] = gauge
            return gauge
        }
        gauge?.set(to: certificate.notAfter.secondsSinceEpoch)
    }

    /// Counts and times a probe whose result was dropped because a later probe of the target had
    /// already been applied (probes overlap while a server hangs): it ran, so `reachd_probes_total`
    /// and the duration histogram include it, but the success gauge keeps the newer result.
    package func probeSuperseded(_ target: ProbeTarget, result: ProbeResult) {
        guard result.failure?.reason != .cancelled, let series = series(for: target.name) else { return }
        count(result, in: series, of: target)
    }

    private func count(_ result: ProbeResult, in series: TargetSeries, of target: ProbeTarget) {
        series.duration.record(result.latency)
        if let failure = result.failure {
            let code = failure.reason.code
            (series.failed[code]
                ?? registry.makeCounter(
                    descriptor: Self.probesName,
                    labels: [("target", target.name), ("result", code)]
                ))
                .increment()
        } else {
            series.succeeded.increment()
        }
    }

    /// Counts a tick skipped because the target already had as many probes in flight as may
    /// overlap: a sign that probes outlast their deadline, or that immediate checks crowd it.
    package func probeSkipped(_ target: ProbeTarget) {
        series(for: target.name)?.skipped.increment()
    }

    /// Takes a reloaded target list and interface filter: new targets get their series now, and the
    /// series of removed ones go, so that no alert keeps firing on a `reachd_probe_success` nobody
    /// updates any more; so does the certificate expiry of a target that no longer speaks TLS. The
    /// filter applies from the next link snapshot.
    package func reconfigure(targets: [ProbeTarget], interfaces: InterfaceFilter) {
        let names = Set(targets.map(\.name))
        let secured = Set(targets.filter(\.usesTLS).map(\.name))
        state.withLock { state in
            for (name, gauge) in state.certificateExpiries where !secured.contains(name) {
                registry.unregisterGauge(gauge)
                state.certificateExpiries[name] = nil
            }
            state.interfaces = interfaces
            for (name, series) in state.targets where !names.contains(name) {
                registry.unregisterGauge(series.success)
                registry.unregisterDurationHistogram(series.duration)
                registry.unregisterCounter(series.succeeded)
                registry.unregisterCounter(series.skipped)
                if let echoes = series.echoes {
                    registry.unregisterCounter(echoes.sent)
                    registry.unregisterCounter(echoes.received)
                }
                registry.unregisterGauge(series.failing)
                for counter in series.failed.values { registry.unregisterCounter(counter) }
                state.targets[name] = nil
            }
            for target in targets where state.targets[target.name] == nil {
                state.targets[target.name] = Self.makeSeries(target.name, kind: target.kind, in: registry)
            }
        }
    }

    // MARK: Series

    /// The series of a configured target; nil for any other name.
    private func series(for name: String) -> TargetSeries? {
        state.withLock { $0.targets[name] }
    }

    private static func makeSeries(
        _ name: String,
        kind: String,
        in registry: PrometheusCollectorRegistry
    ) -> TargetSeries {
        let target = [("target", name)]
        return TargetSeries(
            success: registry.makeGauge(descriptor: probeSuccessName, labels: target),
            duration: registry.makeDurationHistogram(
                descriptor: probeDurationName,
                labels: target,
                buckets: probeDurationBuckets
            ),
            succeeded: registry.makeCounter(descriptor: probesName, labels: target + [("result", "success")]),
            skipped: registry.makeCounter(descriptor: probeSkippedName, labels: target),
            failing: registry.makeGauge(descriptor: failingTargetName, labels: target),
            failed: Dictionary(
                uniqueKeysWithValues: failureCodes(ofKind: kind).map { code in
                    (code, registry.makeCounter(descriptor: probesName, labels: target + [("result", code)]))
                }
            ),
            echoes: kind == "icmp"
                ? (
                    registry.makeCounter(descriptor: echoesSentName, labels: target),
                    registry.makeCounter(descriptor: echoesReceivedName, labels: target)
                ) : nil
        )
    }

    /// Sets `reachd_link_up` for `up`; with `removingOthers`, drops the series of interfaces that
    /// are gone, so that interface churn (containers' veths) does not pile up series.
    private func setLinks(_ up: [String: (kind: String, value: Double)], removingOthers: Bool, in state: inout State) {
        for (name, series) in state.links where removingOthers ? up[name] == nil : false {
            registry.unregisterGauge(series.gauge)
            state.links[name] = nil
        }
        for (name, link) in up {
            if let series = state.links[name], series.kind != link.kind {
                registry.unregisterGauge(series.gauge)
                state.links[name] = nil
            }
            let series =
                state.links[name]
                ?? LinkSeries(
                    kind: link.kind,
                    gauge: registry.makeGauge(
                        descriptor: Self.linkUpName,
                        labels: [("interface", name), ("kind", link.kind)]
                    )
                )
            series.gauge.set(to: link.value)
            state.links[name] = series
        }
    }

    /// Sets `reachd_captive_portal`: 1 for the interface behind a portal (the API's, else the first
    /// usable one, which the probes went out of; `default` without a link source), 0 for the other
    /// usable interfaces; the series of an interface no longer usable goes.
    private func setPortals(_ verdict: Verdict, in state: inout State) {
        let behind = verdict.portal.flatMap {
            $0.isCaptive ? ($0.interface ?? verdict.usableInterfaces.first ?? "default") : nil
        }
        let names = Set(verdict.usableInterfaces.filter { state.interfaces.admits($0) } + (behind.map { [$0] } ?? []))
        for (name, gauge) in state.portals where !names.contains(name) {
            registry.unregisterGauge(gauge)
            state.portals[name] = nil
        }
        for name in names {
            let gauge =
                state.portals[name]
                ?? registry.makeGauge(descriptor: Self.captivePortalName, labels: [("interface", name)])
            gauge.set(to: name == behind ? 1 : 0)
            state.portals[name] = gauge
        }
    }
}
