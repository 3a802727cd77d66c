/// Per-target damping: how many consecutive results it takes to change the target's health.
///
/// The defaults (1 and 1) keep the one-second semantics: one failed probe marks a healthy target
/// down. Raise them for Kubernetes/ConnMan-style damping of a flaky path.
package struct Hysteresis: Sendable, Hashable {
    package var failuresBeforeDown: Int
    package var successesBeforeUp: Int

    package init(failuresBeforeDown: Int = 1, successesBeforeUp: Int = 1) {
        self.failuresBeforeDown = failuresBeforeDown
        self.successesBeforeUp = successesBeforeUp
    }
}
