import Logging
import ReachCore
import ReachLink
import ReachPOSIX
import ReachProbes
import ReachSupport
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Finds where the path breaks while a target fails without an answer (a timeout, an unreachable
/// network, a name that did not resolve), and tells the monitor, which decides the fault
/// (``ReachCore/Fault/init(_:evidence:)``):
/// - the default gateway on the system's path (the one the kernel's routing picks, see
///   ``RouteSourceAddress``): ICMP echo over an unprivileged ping socket out of its interface
///   (``ICMPEchoProber``); where ping sockets are not allowed, the kernel's neighbour table
///   (``NeighbourTable``: `FAILED`/`INCOMPLETE` is silent), said once in the log;
/// - the upstream reference (`upstream.check`): a TCP connect within the probe deadline.
///
/// It watches the probes themselves, not the verdict: the first round starts with the first
/// unanswered probe, while the hysteresis may still hold the verdict `connected`, so that the
/// fault is usually known by the time the verdict turns (until then it is not known, never guessed).
/// One round every probe interval while such a failure lasts; nothing at all while the targets
/// pass, answer wrongly (the path works) or are on loopback. When it ends, the findings are forgotten.
final class PathEvidenceService: Service, ProbeObserver, Sendable {
    private let upstream: UpstreamCheck
    private let monitor: ConnectivityMonitor
    private let clock: MonitorClock
    private let interval: Duration
    private let timeout: Duration
    private let echo: ICMPEchoProber
    private let tcp: TCPProber
    private let logger: Logger
    /// Told once each: ping sockets refused, no upstream reference.
    private let said = Mutex<Set<String>>([])
    /// The targets whose last probe went unanswered over the network: the suspicion.
    private let silent = Mutex<Set<String>>([])
    private let wake = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    /// Rounds run so far (for tests and the benchmark: none while all is well).
    let rounds = Atomic<Int>(0)

    init(
        upstream: UpstreamCheck,
        monitor: ConnectivityMonitor,
        clock: MonitorClock,
        interval: Duration,
        timeout: Duration,
        logger: Logger
    ) {
        self.upstream = upstream
        self.monitor = monitor
        self.clock = clock
        self.interval = interval
        self.timeout = timeout
        self.echo = ICMPEchoProber()
        self.tcp = TCPProber()
        self.logger = logger
    }

    func run() async {
        await cancelWhenGracefulShutdown {
            for await _ in self.wake.stream { await self.gather() }
        }
    }

    // MARK: ProbeObserver (on the probes' event loop: a set insert or remove at most)

    func probeFinished(_ target: ProbeTarget, result: ProbeResult) {
        let unanswered = result.failure.map { $0.reason.needsPathEvidence && $0.reason != .cancelled } ?? false
        guard unanswered, !target.endpoint.isLoopback else {
            silent.withLock { _ = $0.remove(target.name) }
            return
        }
        if silent.withLock({ $0.insert(target.name).inserted && $0.count == 1 }) { wake.continuation.yield() }
    }

    private var isSuspected: Bool { silent.withLock { !$0.isEmpty } }

    /// Runs rounds while suspected, one every probe interval (or, when a round takes the probe
    /// deadline, right after it); forgets the findings when the suspicion ends. Without a usable
    /// link the probes stop, and so does the suspicion: the next unanswered probe starts it anew.
    private func gather() async {
        while isSuspected, !Task.isCancelled {
            if monitor.current.verdict.fault == .link {
                silent.withLock { $0.removeAll() }
                break
            }
            let rest = Task { [clock, interval] in try? await clock.sleep(for: interval) }
            await round()
            await rest.value
        }
        monitor.update(pathEvidence: nil)
    }

    /// One round: the gateway and the upstream reference, side by side.
    private func round() async {
        rounds.add(1, ordering: .relaxed)
        let links = monitor.links
        async let gateway = gatewayFinding(links)
        async let upstream = upstreamFinding(links)
        let (gatewayFound, upstreamFound) = await (gateway, upstream)
        monitor.update(pathEvidence: PathEvidenceRound(gateway: gatewayFound, upstream: upstreamFound))
    }

    private func gatewayFinding(_ links: LinkSnapshot?) async -> GatewayFinding? {
        guard let links else { return nil }
        // The kernel's own choice for traffic leaving this machine: IPv4 first, else IPv6.
        let paths = [IPAddress("192.0.2.1"), IPAddress("2001:db8::1")].compactMap { $0 }.lazy.compactMap {
            destination in
            RouteSourceAddress.toward(destination).flatMap { links.defaultGateway(from: $0) }
        }
        guard let path = paths.first else { return nil }
        let (interface, gateway) = (path.interface, path.gateway)
        switch await echo.echo(gateway, interface: interface.name) {
        case .answered:
            return GatewayFinding(interface: interface.name, address: gateway, answers: true, evidence: .echo)
        case .silent:
            return GatewayFinding(interface: interface.name, address: gateway, answers: false, evidence: .echo)
        case .notPermitted(let code):
            sayOnce(
                "ping",
                level: .notice,
                """
                ICMP echo to the gateway is not allowed (\(String(cString: strerror(code))): net.ipv4.ping_group_range leaves out reachd's group); \
                a silent gateway is told from the kernel's neighbour table alone, later (when it marks the gateway FAILED or INCOMPLETE)
                """
            )
            return await neighbourFinding(interface: interface, gateway: gateway)
        case .failed(let code):
            logger.debug(
                "ICMP echo to gateway \(gateway) on \(interface.name) failed: \(String(cString: strerror(code)))"
            )
            return await neighbourFinding(interface: interface, gateway: gateway)
        }
    }

    private func neighbourFinding(interface: InterfaceFacts, gateway: IPAddress) async -> GatewayFinding? {
        guard let state = await NeighbourTable.state(of: gateway, interfaceIndex: interface.index) else { return nil }
        return GatewayFinding(
            interface: interface.name,
            address: gateway,
            answers: !state.isUnreachable,
            evidence: .neighbour
        )
    }

    private func upstreamFinding(_ links: LinkSnapshot?) async -> UpstreamFinding? {
        let reference: HostPort?
        switch upstream {
        case .none: return nil
        case .tcp(let address): reference = address
        case .resolver:
            reference = UpstreamCheck.resolverReference(
                resolvConf: Self.read(UpstreamCheck.resolvConfFile) ?? "",
                resolvedUpstream: Self.read(UpstreamCheck.resolvedUpstreamFile),
                links: links
            )
        }
        guard let reference else {
            sayOnce(
                "upstream",
                level: .info,
                """
                no upstream reference (upstream.check: resolver found no resolver beyond a directly connected network): \
                a target's silence is told as the server's fault
                """
            )
            return nil
        }
        let target = ProbeTarget(name: "upstream", check: .tcp(reference), timeout: timeout)
        let result = await withCheckedContinuation { continuation in
            _ = tcp.start(target) { continuation.resume(returning: $0) }
        }
        // A refusal crossed the path too: only silence and unreachability say the internet connection is down.
        return result.failure.map { $0.reason.isAnswer ? .answers : .unreachable } ?? .answers
    }

    private func sayOnce(_ key: String, level: Logger.Level, _ message: String) {
        guard said.withLock({ $0.insert(key).inserted }) else { return }
        logger.log(level: level, "\(message)")
    }

    /// A resolver file's text; `nil` when it is missing, unreadable or past 64 KiB (no real one is).
    private static func read(_ path: String) -> String? {
        try? BoundedFile.readText(path, limit: 64 << 10).get()
    }
}
