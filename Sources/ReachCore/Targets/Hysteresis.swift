/// Per-target damping: how many consecutive results it takes to change the target's health.
///
/// The defaults (1 and 1) keep the one-second semantics: one failed probe marks a healthy target
/// down. Raise them for Kubernetes/ConnMan-style damping of a flaky path.
public struct Hysteresis: Sendable, Hashable {
    public var failuresBeforeDown: Int
    public var successesBeforeUp: Int

    public init(failuresBeforeDown: Int = 1, successesBeforeUp: Int = 1) {
        self.failuresBeforeDown = failuresBeforeDown
        self.successesBeforeUp = successesBeforeUp
    }
}
