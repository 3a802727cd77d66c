/// Identifies the link period a probe started in.
///
/// The epoch advances whenever the usable link is lost or regained and whenever the system goes to
/// sleep or wakes. A probe result stamped with an older epoch is stale — it may have succeeded over a
/// path that no longer exists — and the monitor drops it. This settles the race between a link loss
/// and a probe that was already in flight.
package struct ProbeEpoch: Sendable, Hashable, Comparable {
    package let rawValue: UInt64

    package init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    package static func < (lhs: ProbeEpoch, rhs: ProbeEpoch) -> Bool { lhs.rawValue < rhs.rawValue }

    func next() -> ProbeEpoch { ProbeEpoch(rawValue: rawValue &+ 1) }
}

/// Why probing is suspended.
package enum ProbeSuspension: String, Sendable, Hashable {
    /// No usable link: the verdict is already `disconnected`, and probes could only fail.
    case noUsableLink
    /// The system is going to sleep or asleep (logind's `PrepareForSleep`).
    case systemSleeping
}

/// What the monitor asks of the probe scheduler, as a value that only ever moves forward.
///
/// It is state rather than a queue of commands so that a scheduler that falls behind loses
/// nothing by reading only the latest value: it suspends while ``suspension`` is set, and probes
/// every target at once whenever ``immediateProbeRequests`` has grown since it last looked.
package struct ProbeControl: Sendable, Hashable {
    /// Set while probing should stop.
    package var suspension: ProbeSuspension?
    /// Counts requests to probe every target now: link regained, system woke, a client asked.
    package var immediateProbeRequests: UInt64

    package init(suspension: ProbeSuspension? = nil, immediateProbeRequests: UInt64 = 0) {
        self.suspension = suspension
        self.immediateProbeRequests = immediateProbeRequests
    }

    package var isSuspended: Bool { suspension != nil }
}
