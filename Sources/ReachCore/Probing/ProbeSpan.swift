import ReachSupport

/// When a probe began (the scheduler launched it) and when its result came back to the scheduler,
/// on the wall clock.
///
/// What the portal rule compares: which probe crossed the network first. The time the monitor
/// takes a result adds the delay of a loaded machine, which made a check that began before a
/// portal came look as if it began after a target failed.
package struct ProbeSpan: Sendable, Equatable {
    package var began: WallTime
    package var ended: WallTime

    package init(began: WallTime, ended: WallTime) {
        self.began = began
        self.ended = ended
    }
}
