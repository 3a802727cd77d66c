import Logging
import ReachAPI
import ReachCore
import ReachEngine
import ReachSupport
import ReachSystemd
import ServiceLifecycle
import Synchronization

/// Keeps systemd informed (the `sd_notify` protocol), the one part of reachd that speaks to it:
/// `READY=1` once, after the listeners are bound (it is held until then) and the first verdict is
/// out; `STATUS=` with the verdict in one line on every change; `RELOADING=1` and `READY=1`
/// around a reload; `WATCHDOG=1` while reachd is making progress; `STOPPING=1` when it begins to stop.
///
/// The watchdog is only fed after asking the parts that can wedge: the monitor (its lock must be
/// free to read the verdict) and the probe scheduler (its dispatcher on time, no probe past its
/// deadline). A wedged reachd therefore stops feeding it and systemd restarts it, rather than
/// being kept alive by a timer that ticks whatever happens.
final class ServiceManagerService: Service, Sendable {
    private let notifier: SystemdNotifier
    private let monitor: ConnectivityMonitor
    private let engine: ConnectivityEngine
    private let readyTimeout: Duration
    private let clock: MonitorClock
    private let logger: Logger
    private let readySent = Mutex(false)

    /// - Parameter readyTimeout: READY=1 goes out after this long even without a verdict (the
    ///   first probes' timeouts).
    init(
        notifier: SystemdNotifier,
        monitor: ConnectivityMonitor,
        engine: ConnectivityEngine,
        readyTimeout: Duration,
        clock: MonitorClock,
        logger: Logger
    ) {
        self.notifier = notifier
        self.monitor = monitor
        self.engine = engine
        self.readyTimeout = readyTimeout
        self.clock = clock
        self.logger = logger
    }

    func run() async {
        guard notifier.isEnabled else {
            // Not started by systemd: nothing to tell. A service that returns would stop the
            // group, so idle until the others stop.
            try? await gracefulShutdown()
            return
        }
        await withGracefulShutdownHandler {
            await cancelWhenGracefulShutdown {
                await withDiscardingTaskGroup { group in
                    group.addTask { await self.followVerdicts() }
                    group.addTask {
                        guard (try? await self.clock.sleep(for: self.readyTimeout)) != nil else { return }
                        self.announceReady(status: self.monitor.current.verdict.summary)
                    }
                    if let interval = self.notifier.watchdogInterval {
                        group.addTask { await self.feedWatchdog(every: interval / 2) }
                    }
                }
            }
        } onGracefulShutdown: {
            self.send(["STOPPING=1", "STATUS=stopping"])
        }
    }

    private func followVerdicts() async {
        var lastStatus = ""
        for await event in monitor.subscribe() {
            let status = event.verdict.summary
            if event.verdict.state != .unknown, announceReady(status: status) {
                lastStatus = status
                continue
            }
            // Before READY=1 the status says nothing systemd shows: it still reads "activating".
            if status != lastStatus, readySent.withLock({ $0 }) {
                send(["STATUS=\(status)"])
                lastStatus = status
            }
        }
    }

    /// Sends READY=1 with `status` the first time; returns whether it did.
    @discardableResult
    private func announceReady(status: String) -> Bool {
        guard
            readySent.withLock({ sent in
                defer { sent = true }
                return !sent
            })
        else { return false }
        send(["READY=1", "STATUS=\(status)"])
        return true
    }

    /// Runs `reload` between `RELOADING=1` (with `MONOTONIC_USEC=`, as `Type=notify-reload`
    /// expects) and `READY=1` with the verdict. Before readiness a reload is applied all the same
    /// but announced not at all: its `READY=1` would tell systemd reachd is ready before the
    /// listeners are bound or the first verdict is known.
    func reloading<Result>(_ reload: () async -> Result) async -> Result {
        let announced = notifier.isEnabled && readySent.withLock { $0 }
        if announced {
            send([
                "RELOADING=1", "MONOTONIC_USEC=\(SystemdNotifier.monotonicMicroseconds())",
                "STATUS=reloading the configuration",
            ])
        }
        let result = await reload()
        if announced { send(["READY=1", "STATUS=\(monitor.current.verdict.summary)"]) }
        return result
    }

    private func feedWatchdog(every period: Duration) async {
        // A scheduler more than this late, or a probe this far past its deadline, is wedged.
        let grace = max(.seconds(2), period)
        var starved = false
        while (try? await clock.sleep(for: period)) != nil {
            _ = monitor.current
            guard engine.isMakingProgress(grace: grace) else {
                if !starved {
                    logger.critical("probe scheduler is not making progress: no longer feeding systemd's watchdog")
                }
                starved = true
                continue
            }
            if starved { logger.notice("probe scheduler is making progress again: feeding systemd's watchdog") }
            starved = false
            send(["WATCHDOG=1"])
        }
    }

    private func send(_ lines: [String]) {
        if let error = notifier.notify(lines) {
            logger.debug(
                "sd_notify failed",
                metadata: ["errno": "\(error)", "message": "\(lines.joined(separator: " "))"]
            )
        }
    }
}
