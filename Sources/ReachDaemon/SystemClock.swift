import Foundation
import ReachCore

extension MonitorClock {
    /// The real clocks: `ContinuousClock` for uptime (it keeps counting through system sleep, so a
    /// verdict's age is honest after a suspend) and the system's real-time clock for wall time.
    public static func system() -> MonitorClock {
        MonitorClock(ContinuousClock()) {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            return WallTime(sinceEpoch: .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec))
        }
    }
}
