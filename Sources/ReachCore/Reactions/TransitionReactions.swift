import Logging
import ReachSupport
import Synchronization

/// The reactions to connectivity transitions and their runs: registration, the reaction rule's
/// bookkeeping (``ReactionTable``) and the tasks that run each body (``CallbackRegistration``).
///
/// ``ConnectivityMonitor`` owns one and hands it every transition it publishes; a program that
/// learns of transitions some other way (ReachKit's reachd-backed service, from reachd's event
/// stream) owns one too, so that its callbacks follow exactly the same rule: once per transition,
/// never twice at once, coalesced or skipped and reported, timed out and reported.
package final class TransitionReactions: Sendable {
    private let clock: MonitorClock
    private let logger: Logger
    private let table = Mutex(ReactionTable())
    private let reports: Broadcast<CallbackReport>
    private let arrivals:
        (stream: AsyncStream<ReactionTable.Arrival>, continuation: AsyncStream<ReactionTable.Arrival>.Continuation)

    /// - Parameters:
    ///   - clock: Times runs and their timeouts.
    ///   - logger: Where each run's outcome, each skip and each stuck reaction is logged.
    package init(clock: MonitorClock, logger: Logger) {
        self.clock = clock
        self.logger = logger
        self.reports = Broadcast(initial: nil, bufferLimit: 64)
        // Unbounded, yet bounded in practice: one small item per transition, taken at once by `run()`.
        self.arrivals = AsyncStream.makeStream(of: ReactionTable.Arrival.self)
    }

    /// Registers `body` for transitions in `directions` (see ``ConnectivityMonitor/addReaction(named:on:timeout:_:)``).
    package func add(
        named name: String?,
        on directions: Set<TransitionDirection>,
        timeout: Duration?,
        _ body: @escaping @Sendable (ConnectivityTransition) async throws -> Void
    ) -> CallbackID {
        table.withLock { $0.add(name: name, directions: directions, timeout: timeout, body: body) }
    }

    /// Removes a reaction from future transitions; a run under way continues to its end. Returns
    /// whether it was registered.
    @discardableResult
    package func remove(_ id: CallbackID) -> Bool {
        table.withLock { $0.remove(id) }
    }

    /// Hands over a transition. Callers deliver transitions in the order they were decided (the
    /// monitor does so under its lock); the runs they start begin in ``run()``.
    package func deliver(_ transition: ConnectivityTransition) {
        arrivals.continuation.yield(table.withLock { $0.arrive(transition) })
    }

    /// Every run's outcome, and every skip, from now on.
    package func callbackReports() -> Subscription<CallbackReport> {
        reports.subscribe()
    }

    /// Starts the runs that transitions set in motion, and logs reactions found stuck, until the
    /// calling task is cancelled; then ends the report stream. Runs once.
    package func run() async {
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                for await arrival in arrivals.stream {
                    for stuck in arrival.stuck { log(stuck) }
                    for start in arrival.starts {
                        group.addTask { await self.react(start) }
                    }
                }
            }
        } onCancel: {
            arrivals.continuation.finish()
        }
        reports.finish()
    }

    /// Ends ``run()`` once the runs under way have ended (or, when cancelled, been abandoned).
    package func finish() {
        arrivals.continuation.finish()
    }

    /// Runs one reaction until nothing more is owed to it: one task per busy reaction, however
    /// many transitions arrive meanwhile.
    private func react(_ first: ReactionTable.Start) async {
        var next: ReactionTable.Start? = first
        while let start = next {
            let id = start.reaction.id
            let ending = await start.reaction.run(for: start.transition, coalesced: start.coalesced, clock: clock) {
                report in
                if report.outcome == .timedOut { table.withLock { $0.markOverdue(id) } }
                log(report)
                reports.send(report)
            }
            if case .endedLate(let after) = ending {
                logger.notice(
                    "\(start.reaction.name) ended \(Int(after.milliseconds)) ms after its run started, past its timeout: it takes transitions again",
                    metadata: ["callback": "\(start.reaction.name)", "sequence": "\(start.transition.sequence)"]
                )
            }
            let finish = table.withLock { $0.finish(id, stopping: ending == .abandoned || Task.isCancelled) }
            if let skipped = finish.skipped {
                log(skipped)
                reports.send(skipped)
            }
            next = finish.next
        }
    }

    private func log(_ report: CallbackReport) {
        logger.log(level: report.logLevel, "\(report.logMessage)", metadata: report.logMetadata)
    }

    private func log(_ stuck: ReactionTable.Stuck) {
        logger.warning(
            "\(stuck.reaction.name) is still running past its timeout: transition #\(stuck.transition.sequence) waits for it to end",
            metadata: ["callback": "\(stuck.reaction.name)", "sequence": "\(stuck.transition.sequence)"]
        )
    }
}
