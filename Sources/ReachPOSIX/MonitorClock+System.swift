import ReachSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension MonitorClock {
    /// The real clocks: `ContinuousClock` for uptime (it keeps counting through system sleep, so a
    /// verdict's age is honest after a suspend) and the system's real-time clock for wall time.
    ///
    /// Here rather than in the core, which reads no system clock; the daemon and ReachKit use it.
    public static func system() -> MonitorClock {
        MonitorClock(ContinuousClock()) { WallTime.now() }
    }
}

extension WallTime {
    /// The system's real-time clock now: for stamping what a person reads (log lines), where a
    /// whole ``MonitorClock`` is not needed.
    package static func now() -> WallTime {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return WallTime(sinceEpoch: .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec))
    }
}
