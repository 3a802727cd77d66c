import ReachCore
import ReachSupport

extension ConfigurationParser {
    static let qualityKeys = ["latency", "loss", "jitter", "window"]
    static let qualityMeasureRange = Duration.milliseconds(1)...Duration.seconds(60)
    static let qualityWindowRange = Duration.seconds(1)...Duration.seconds(3600)

    /// The `quality` section (the defaults of every target), or a target's own over `defaults`:
    /// a mapping of budgets, any key of which a target may override, or `off` (no quality).
    /// Without the section, targets have no quality.
    mutating func parseQuality(_ node: ConfigNode, over defaults: QualityBudget?) -> QualityBudget?? {
        if case .scalar(_) = node.node {
            guard reader.choice(node, of: ["off"]) != nil else { return nil }
            return .some(nil)
        }
        guard let entries = reader.mapping(node, keys: Self.qualityKeys) else { return nil }
        var budget = defaults ?? QualityBudget()
        if let node = entries["latency"], let value = reader.duration(node, in: Self.qualityMeasureRange) {
            budget.latency = value
        }
        if let node = entries["jitter"], let value = reader.duration(node, in: Self.qualityMeasureRange) {
            budget.jitter = value
        }
        if let node = entries["loss"], let value = share(node) { budget.loss = value }
        if let node = entries["window"], let value = reader.duration(node, in: Self.qualityWindowRange) {
            budget.window = value
        }
        return .some(budget)
    }

    /// A share of probes like `5%` (or `0.5%`): above 0 % and below 100 %, as a fraction.
    mutating func share(_ node: ConfigNode) -> Double? {
        let expected = "a share of probes like 5% (above 0% and below 100%)"
        guard let text = reader.scalar(node, expected: expected) else { return nil }
        guard text.hasSuffix("%"), let percent = Double(String(text.dropLast()).trimmingWhitespace), percent.isFinite
        else {
            let hint = Double(text) != nil ? " (add a %: \(text)%)" : ""
            reader.report("\"\(text)\" is not \(expected)\(hint)", at: node)
            return nil
        }
        guard percent > 0, percent < 100 else {
            reader.report("\(text) is out of range: expected \(expected)", at: node)
            return nil
        }
        return percent / 100
    }

    /// A window must hold the samples its judge needs: at least 3 probes at the target's interval.
    mutating func checkQualityWindow(of target: ProbeTarget, at node: ConfigNode) {
        guard let budget = target.quality, budget.judgesAnything, budget.window < target.interval * 3 else { return }
        reader.report(
            """
            quality window \(DurationText.format(budget.window)) holds fewer than 3 probes of target \
            "\(target.name)" (interval \(DurationText.format(target.interval))): make it at least \
            \(DurationText.format(target.interval * 3))
            """,
            at: node
        )
    }
}
