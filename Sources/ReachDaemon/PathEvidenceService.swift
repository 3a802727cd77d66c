import Logging
import ReachCore
import ReachLink
import ReachPOSIX
import ReachProbes
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Finds where the path breaks while a target fails without an answer (a timeout, an unreachable
/// network, a name that did not resolve), and tells the monitor, which decides the fault
/// (``ReachCore/Fault/init(_:gateway:upstream:)``):
/// - the default gateway on the system's path (the one the kernel's routing picks, see
///   ``RouteSourceAddress``): ICMP echo over an unprivileged ping socket out of its interface
///   (``ICMPEchoProber``); where ping sockets are not allowed, the kernel's neighbour table
///   (``NeighbourTable``: `FAILED`/`INCOMPLETE` is silent), said once in the log;
/// - the upstream reference (`upstream.check`): a TCP connect within the probe deadline.
///
/// One round every probe interval while such a failure lasts; nothing at all while the targets
/// pass, answer wrongly (the path works) or are on loopback. When it ends, the findings are forgotten.
final class PathEvidenceService: Service, Sendable {
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
    /// Whether the verdict is a failure the evidence can place (``needsEvidence(_:)``).
    private let suspected = Atomic<Bool>(false)
    /// Rounds run so far (for tests and the benchmark: none while all is well).
    let rounds = Atomic<Int>(0)

    init(upstream: UpstreamCheck, monitor: ConnectivityMonitor, clock: MonitorClock, interval: Duration, timeout: Duration, logger: Logger) {
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
        let updates = monitor.subscribe()
        let wake = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    for await event in updates {
                        let now = self.needsEvidence(event.verdict)
                        if now, !self.suspected.exchange(now, ordering: .relaxed) { wake.continuation.yield() }
                        if !now { self.suspected.store(false, ordering: .relaxed) }
                    }
                    wake.continuation.finish()
                }
                group.addTask {
                    for await _ in wake.stream { await self.gather() }
                }
            }
        }
    }

    /// Whether the verdict is a failure that the path evidence can place: a target that did not
    /// answer, reached over the network.
    func needsEvidence(_ verdict: Verdict) -> Bool {
        guard verdict.state == .disconnected, case .targetFailed(let name, let failure) = verdict.reason, !failure.isAnswer else { return false }
        return monitor.targets.first { $0.name == name }.map { !$0.endpoint.isLoopback } ?? false
    }

    /// Runs rounds while suspected, one every probe interval (or, when a round takes the probe
    /// deadline, right after it); forgets the findings when the suspicion ends.
    private func gather() async {
        while suspected.load(ordering: .relaxed), !Task.isCancelled {
            let rest = Task { [clock, interval] in try? await clock.sleep(for: interval) }
            await round()
            await rest.value
        }
        monitor.update(gateway: nil)
        monitor.update(upstream: nil)
    }

    /// One round: the gateway and the upstream reference, side by side.
    private func round() async {
        rounds.add(1, ordering: .relaxed)
        let links = monitor.links
        async let gateway = gatewayFinding(links)
        async let upstream = upstreamFinding(links)
        let (gatewayFound, upstreamFound) = await (gateway, upstream)
        monitor.update(gateway: gatewayFound)
        monitor.update(upstream: upstreamFound)
    }

    private func gatewayFinding(_ links: LinkSnapshot?) async -> GatewayFinding? {
        guard let links else { return nil }
        // The kernel's own choice for traffic leaving this machine: IPv4 first, else IPv6.
        let paths = [IPAddress("192.0.2.1"), IPAddress("2001:db8::1")].compactMap { $0 }.lazy.compactMap { destination in
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
            sayOnce("ping", level: .notice, """
                ICMP echo to the gateway is not allowed (\(String(cString: strerror(code))): net.ipv4.ping_group_range leaves out reachd's group); \
                a silent gateway is told from the kernel's neighbour table alone, later (when it marks the gateway FAILED or INCOMPLETE)
                """)
            return await neighbourFinding(interface: interface, gateway: gateway)
        case .failed(let code):
            logger.debug("ICMP echo to gateway \(gateway) on \(interface.name) failed: \(String(cString: strerror(code)))")
            return await neighbourFinding(interface: interface, gateway: gateway)
        }
    }

    private func neighbourFinding(interface: InterfaceFacts, gateway: IPAddress) async -> GatewayFinding? {
        guard let state = await NeighbourTable.state(of: gateway, interfaceIndex: interface.index) else { return nil }
        return GatewayFinding(interface: interface.name, address: gateway, answers: !state.isUnreachable, evidence: .neighbour)
    }

    private func upstreamFinding(_ links: LinkSnapshot?) async -> UpstreamFinding? {
        let reference: HostPort?
        switch upstream {
        case .none: return nil
        case .tcp(let address): reference = address
        case .resolver:
            reference = UpstreamCheck.resolverReference(
                resolvConf: Self.read(UpstreamCheck.resolvConfFile) ?? "", resolvedUpstream: Self.read(UpstreamCheck.resolvedUpstreamFile), links: links)
        }
        guard let reference else {
            sayOnce("upstream", level: .info, """
                no upstream reference (upstream.check: resolver found no resolver beyond a directly connected network): \
                a target's silence is told as the server's fault
                """)
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
