import NIOCore
import NIOPosix
import ReachCore
import ReachSupport

/// Fires the probe scheduler's ticks on one event loop, the loop its probes then start on.
///
/// A tick that fires on the loop starts its HTTP and TCP probes right there (the probers take the
/// current loop of their group), and their results come back on it: the whole probe path, tick to
/// recorded result, stays on one thread, as the floor prober's does.
package struct EventLoopProbeTimer: ProbeTimer {
    /// Where every tick fires, and so where the probes it starts run.
    package let loop: any EventLoop

    /// - Parameter loop: By default one loop of NIO's shared group, the probers' default group.
    package init(loop: any EventLoop = MultiThreadedEventLoopGroup.singleton.next()) {
        self.loop = loop
    }

    /// A callback scheduled on ``loop`` after the time left until `uptime` on `clock`.
    ///
    /// A callback, not a task: NIO runs it without the promise and future a scheduled task
    /// allocates, once per tick. A loop that is shutting down never fires it.
    package func schedule(
        at uptime: Duration,
        of clock: MonitorClock,
        _ body: @escaping @Sendable () -> Void
    ) -> ProbeCancellation {
        let delay = TimeAmount(max(uptime - clock.uptime, .zero))
        guard let scheduled = try? loop.scheduleCallback(in: delay, handler: Tick(body: body)) else { return .none }
        return ProbeCancellation { scheduled.cancel() }
    }

    private struct Tick: NIOScheduledCallbackHandler, Sendable {
        var body: @Sendable () -> Void

        func handleScheduledCallback(eventLoop: some EventLoop) { body() }
    }
}
