import FoundationEssentials
import Logging
import ReachAPI
import ReachConfig
import ReachCore
import ReachHistory
import ReachMetrics
import ReachPOSIX
import ReachServer
import ReachSupport
import ServiceLifecycle
import Synchronization

/// Keeps reachd's history (the `history` section): opens the file, feeds it every verdict and probe
/// result, commits once a second, prunes and refreshes `reachd_uptime_ratio` once a minute, and
/// answers `GET /v1/history`.
///
/// History never stops reachd: a file that cannot be opened is logged (with what to do) and reachd
/// runs without it, answering `/v1/history` with `503`; a corrupt one is moved aside and a fresh one started.
final class HistoryService: Service, HistoryReading, ProbeObserver, Sendable {
    static let flushInterval = Duration.seconds(1)
    static let maintenanceInterval = Duration.seconds(60)

    private enum Current {
        case off(String)
        case recording(HistoryRecorder)
    }

    private let settings: Mutex<HistorySettings>
    private let current = Mutex(Current.off("history is starting"))
    /// Bumped by a reload that changes `history`, so that the running loop reopens.
    private let changes = AsyncStream<HistorySettings>.makeStream(bufferingPolicy: .bufferingNewest(1))
    private let monitor: ConnectivityMonitor
    private let metrics: ReachMetrics
    private let clock: MonitorClock
    private let environment: [String: String]
    private let logger: Logger

    init(
        settings: HistorySettings,
        monitor: ConnectivityMonitor,
        metrics: ReachMetrics,
        clock: MonitorClock,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        logger: Logger
    ) {
        self.settings = Mutex(settings)
        self.monitor = monitor
        self.metrics = metrics
        self.clock = clock
        self.environment = environment
        self.logger = logger
    }

    func run() async {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    for await event in self.monitor.subscribe() { self.recorder?.record(event.verdict) }
                }
                var settings = self.settings.withLock { $0 }
                while !Task.isCancelled, let next = await self.record(with: settings) { settings = next }
                group.cancelAll()
            }
        }
    }

    /// Applies changed `history` settings (a reload): the current file is closed and the new one opened.
    func reconfigure(_ settings: HistorySettings) {
        let changed = self.settings.withLock { current in
            defer { current = settings }
            return current != settings
        }
        if changed { changes.continuation.yield(settings) }
    }

    private var recorder: HistoryRecorder? {
        current.withLock { if case .recording(let recorder) = $0 { recorder } else { nil } }
    }

    /// The settings of the next reload that changes them; nil when the task is cancelled.
    private func nextChange() async -> HistorySettings? {
        var iterator = changes.stream.makeAsyncIterator()
        return await iterator.next()
    }

    /// Records with `settings` until a reload changes them (returns the new ones) or the task is cancelled (nil).
    private func record(with settings: HistorySettings) async -> HistorySettings? {
        guard settings.enabled else {
            current.withLock { $0 = .off("history is off (history.enabled: false)") }
            return await nextChange()
        }
        guard let recorder = await open(settings) else { return await nextChange() }
        current.withLock { $0 = .recording(recorder) }
        // Logged once it is true: whoever reads the line and asks for history gets it.
        let path = recorder.store.path
        logger.info("history: recording to \(path)", metadata: ["path": "\(path)"])
        recorder.record(monitor.current.verdict)
        let next = await withTaskGroup(of: HistorySettings?.self) { group in
            group.addTask { await self.nextChange() }
            group.addTask {
                await self.commitAndMaintain(recorder)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        current.withLock { $0 = .off("history is reopening") }
        // Not cancelled with this task: what was gathered is written before the file closes.
        let logger = self.logger
        await Task {
            do {
                try await recorder.flush(closingMinutes: true)
            } catch {
                logger.error(
                    "history: the last records could not be written: \(error)",
                    metadata: ["path": "\(recorder.store.path)"]
                )
            }
            recorder.store.close()
        }.value
        return next
    }

    /// Commits every second and maintains every minute until cancelled.
    private func commitAndMaintain(_ recorder: HistoryRecorder) async {
        // The first maintenance a few seconds in, once this run has known time to count.
        var sinceMaintenance = Self.maintenanceInterval - .seconds(5)
        var failing = false
        while !Task.isCancelled {
            do {
                if sinceMaintenance >= Self.maintenanceInterval {
                    sinceMaintenance = .zero
                    metrics.setUptimeRatios(try await recorder.maintain())
                }
                try await recorder.flush()
                if failing {
                    logger.notice("history: writing works again", metadata: ["path": "\(recorder.store.path)"])
                }
                failing = false
            } catch {
                if !failing {
                    logger.error(
                        "history: cannot write (up to \(recorder.maximumPending) rows kept in memory, retried each second): \(error)",
                        metadata: ["path": "\(recorder.store.path)"]
                    )
                }
                failing = true
            }
            metrics.setHistoryPendingRows(recorder.pendingRows)
            try? await Task.sleep(for: Self.flushInterval)
            sinceMaintenance += Self.flushInterval
        }
    }

    /// Opens the file `settings` name, off the cooperative pool; logs and returns nil when it cannot be used.
    private func open(_ settings: HistorySettings) async -> HistoryRecorder? {
        let (path, createsDirectory) = settings.resolvedPath(environment: environment)
        let opened = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<HistoryStore.Opening, HistoryStoreError>, Never>) in
            do {
                try DedicatedThread.start(named: "reachd-history") {
                    continuation.resume(
                        returning: Result { () throws(HistoryStoreError) in
                            try HistoryStore.open(path: path, createDirectory: createsDirectory)
                        }
                    )
                }
            } catch {
                continuation.resume(returning: .failure(.unusable(path: path, detail: "\(error)")))
            }
        }
        do {
            let (store, movedAside) = try opened.get().values
            if let movedAside {
                logger.error(
                    "the history file \(path) was corrupt (\(movedAside.detail)): moved aside to \(movedAside.path), a fresh one started",
                    metadata: ["path": "\(path)", "moved_to": "\(movedAside.path)"]
                )
            }
            let wall = clock
            let recorder = try await HistoryRecorder(
                store: store,
                settings: settings,
                clock: { wall.wallTime },
                logger: logger
            )
            return recorder
        } catch {
            let reason = "history is off: \(error)"
            // Set before it is logged: whoever reads the line and asks must get the reason.
            current.withLock { $0 = .off(reason) }
            // Outside the unit without history.path, that is expected: a notice, not an error.
            let level: Logger.Level = if case .failure(.noDirectory) = opened { .notice } else { .error }
            logger.log(level: level, "\(reason); reachd runs without history", metadata: ["path": "\(path)"])
            return nil
        }
    }

    // MARK: HistoryReading, ProbeObserver

    func history(_ query: HistoryQuery) async throws -> HistoryDocument {
        let state = current.withLock { $0 }
        switch state {
        case .off(let reason): throw HistoryUnavailable(reason)
        case .recording(let recorder): return try await recorder.document(query)
        }
    }

    func probeFinished(_ target: ProbeTarget, result: ProbeResult) {
        recorder?.record(result)
    }

    func probeSuperseded(_ target: ProbeTarget, result: ProbeResult) {
        recorder?.record(result)
    }
}
