import NIOCore
import NIOPosix
@_spi(ExperimentalCustomExecutors) @_spi(ExperimentalScheduling) import _Concurrency

/// Runs reachd's tasks, and their sleeps, on the event loops that already run its sockets.
///
/// On Linux Swift's default executor is libdispatch's global pool. Its first worker thread starts
/// libdispatch's pool monitor, a 1 s timer that never stops, so an idle reachd woke once a second
/// for nothing. Every resumption after I/O also hopped from the event loop to a pool thread and
/// back. With the loops as the default executor, a continuation resumed on a loop usually runs on
/// that loop, and an idle reachd sleeps until a timer of its own is due.
///
/// Work here must not block, as on any event loop: blocking work goes to `NIOThreadPool` or a
/// ``DedicatedThread``.
package final class EventLoopExecutor: TaskExecutor, SchedulingExecutor {
    private let group: MultiThreadedEventLoopGroup

    package init(group: MultiThreadedEventLoopGroup) {
        self.group = group
    }

    /// Stays on the current loop when called from one of the group's, so a task resumed by I/O
    /// usually runs where the I/O finished. A job goes through the loop's own job path, as NIO's
    /// takeover of the global executor sends it: running each job from a closure, isolated to no
    /// serial executor (SE-0417's example), cost the status API 22-35 % of its throughput.
    package func enqueue(_ job: consuming ExecutorJob) {
        group.any().executor.enqueue(job)
    }

    package func enqueue<C: Clock>(
        _ job: consuming ExecutorJob,
        after delay: C.Duration,
        tolerance: C.Duration?,
        clock: C
    ) {
        let loop = group.any()
        let job = UnownedJob(job)
        // Every clock reachd sleeps on measures in `Duration`; the loop's timers are monotonic.
        let wait = (delay as? Duration).map(TimeAmount.init) ?? .zero
        loop.scheduleTask(in: wait) { loop.executor.enqueue(ExecutorJob(job)) }
    }
}

/// Makes ``EventLoopExecutor`` over NIO's shared group the default executor of the process, before
/// any task starts; the main executor stays the platform's.
package struct EventLoopExecutorFactory: ExecutorFactory {
    package static let mainExecutor: any MainExecutor = PlatformExecutorFactory.mainExecutor
    package static let defaultExecutor: any TaskExecutor = EventLoopExecutor(
        group: MultiThreadedEventLoopGroup.singleton
    )

    /// Call first thing in `main`, before any `Task`.
    package static func install() {
        _createExecutors(factory: Self.self)
    }
}
