import ReachSupport

extension Duration {
    /// The duration as the configuration writes it: `1s`, `250ms`, `1h`.
    package var configText: String { DurationText.format(self) }
}
