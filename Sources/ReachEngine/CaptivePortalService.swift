import Logging
import ReachCaptivePortal
import ReachCore
import ReachSupport
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// Asks each network's captive-portal API (RFC 8908) whether this machine is captive, and tells
/// the monitor; warns in the journal before a portal's session ends.
///
/// Where the API is: `captive_portal.api_url` when set (asked along the system's routes), else
/// what systemd-networkd learned from the network (RFC 8910), per usable interface and out of it. When it is asked:
/// - at start and whenever the usable interfaces change (a new network may have a portal);
/// - every probe interval while a portal holds the traffic, so that signing in is seen at once;
/// - with a session running, at half its remaining time (at most every 5 minutes) and when its
///   warning is due; otherwise every 5 minutes.
///
/// An API that cannot be asked (unreachable, broken TLS, not JSON) is logged once, until it
/// answers again, and otherwise ignored: the probes and the check URL decide.
final class CaptivePortalService: Service, Sendable {
    static let idleRecheck = Duration.seconds(300)

    private let settings: CaptivePortalSettings
    private let client: CaptivePortalAPIClient
    private let monitor: ConnectivityMonitor
    private let clock: MonitorClock
    private let interval: Duration
    private let timeout: Duration
    private let logger: Logger

    /// - Parameter interval: How often to ask while a portal holds the traffic (the probe interval).
    init(
        settings: CaptivePortalSettings,
        monitor: ConnectivityMonitor,
        clock: MonitorClock,
        interval: Duration,
        timeout: Duration,
        logger: Logger
    ) {
        self.settings = settings
        self.monitor = monitor
        self.clock = clock
        self.interval = interval
        self.timeout = timeout
        self.logger = logger
        client = CaptivePortalAPIClient(caFile: settings.caFile)
    }

    func run() async {
        let updates = monitor.subscribe()
        let wake = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    var interfaces: [String]?
                    for await event in updates where event.verdict.usableInterfaces != interfaces {
                        interfaces = event.verdict.usableInterfaces
                        wake.continuation.yield()
                    }
                }
                group.addTask { await self.poll(wakes: wake.stream, wake: wake.continuation) }
            }
        }
    }

    private func poll(wakes: AsyncStream<Void>, wake: AsyncStream<Void>.Continuation) async {
        var asked: Set<String> = []
        var failing: Set<String> = []
        var warnings = PortalSessionWarnings<WallTime>(lead: settings.sessionWarning)
        var woken = wakes.makeAsyncIterator()
        // The first wake is the monitor's current verdict: asked below already.
        while !Task.isCancelled {
            let apis = currentAPIs()
            var next = Self.idleRecheck
            for (interface, url) in apis.sorted(by: { $0.key < $1.key }) {
                let answer: CaptivePortalAPIAnswer?
                if url == NetworkdLinkState.unrestricted {
                    // The network says it has no portal: nothing to ask, and the probes are not second-guessed.
                    monitor.update(portalAPI: CaptivePortalAPIAnswer(isCaptive: false), interface: interface)
                    continue
                }
                do {
                    answer = try await client.answer(
                        at: url,
                        interface: interface.isEmpty ? nil : interface,
                        timeout: timeout
                    )
                    if failing.remove(url) != nil { logger.notice("captive-portal API \(url) answers again") }
                } catch {
                    answer = nil
                    if failing.insert(url).inserted {
                        logger.warning(
                            "captive-portal API \(url) cannot be asked, ignoring it: \(error)",
                            metadata: ["interface": "\(interface)"]
                        )
                    }
                }
                monitor.update(portalAPI: answer, interface: interface)
                if let answer { next = min(next, nextAsk(after: answer, on: interface, url: url, warnings: &warnings)) }
            }
            for gone in asked.subtracting(apis.keys) {
                monitor.update(portalAPI: nil, interface: gone)
                warnings.forget(interface: gone)
            }
            asked = Set(apis.keys)
            // Whichever comes first: the next ask, or a change of the usable interfaces.
            let timer = Task { [clock, next] in
                if (try? await clock.sleep(for: next)) != nil { wake.yield() }
            }
            _ = await woken.next()
            timer.cancel()
        }
    }

    /// When to ask again after `answer`, warning now if the session's end is near.
    private func nextAsk(
        after answer: CaptivePortalAPIAnswer,
        on interface: String,
        url: String,
        warnings: inout PortalSessionWarnings<WallTime>
    ) -> Duration {
        if answer.isCaptive { return interval }
        guard let seconds = answer.secondsRemaining else { return Self.idleRecheck }
        let now = clock.wallTime
        let end = WallTime(sinceEpoch: now.sinceEpoch + .seconds(seconds))
        if warnings.shouldWarn(interface: interface, sessionEndsAt: end, now: now) {
            var metadata = ReachLogEvent.portalSessionEnding.metadata
            metadata["seconds_remaining"] = "\(seconds)"
            metadata["portal_url"] = "\(answer.userPortalURL ?? url)"
            if !interface.isEmpty { metadata["interface"] = "\(interface)" }
            logger.warning(
                "captive portal: the session ends in \(DurationText.format(.seconds(seconds))); sign in again at \(answer.userPortalURL ?? "the network's login page") to stay connected",
                metadata: metadata
            )
        }
        let half = max(interval, .seconds(seconds) / 2)
        let untilWarning = warnings.untilWarning(sessionEndsAt: end, now: now) ?? Self.idleRecheck
        return max(interval, min(Self.idleRecheck, half, untilWarning))
    }

    /// The API to ask per interface name (`""` when the interface is not known).
    private func currentAPIs() -> [String: String] {
        // Set by hand, the API is no one interface's: it is asked along the system's routes.
        if let url = settings.apiURL { return ["": url] }
        let usable = monitor.current.verdict.usableInterfaces
        var apis: [String: String] = [:]
        for (index, url) in NetworkdLinkState.captivePortalAPIs(in: settings.networkdStateDirectory) {
            guard let name = Self.interfaceName(index) else { continue }
            // With a link source, only usable interfaces; without one (every target on loopback), any.
            if usable.isEmpty || usable.contains(name) { apis[name] = url }
        }
        return apis
    }

    private static func interfaceName(_ index: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(IF_NAMESIZE))
        guard if_indextoname(UInt32(index), &buffer) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
