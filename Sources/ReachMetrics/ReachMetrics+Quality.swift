import Prometheus
import ReachCore
import ReachSupport
import Synchronization

/// The quality's series, sampled at every scrape from the verdict (its windows change with every
/// probe, its events only when the quality does):
/// - `reachd_quality{state}`: a state set over `good`, `impaired` and `none`, exactly one of them 1;
/// - per target with a budget, `reachd_target_quality_latency_seconds` and
///   `reachd_target_quality_loss_ratio` over the window (NaN while the window has no value),
///   `reachd_target_quality_budget{measure}` and `reachd_target_impaired`. A target without a
///   budget has none of them, and a target a reload removed loses them.
final class QualitySeries: Sendable {
    private struct TargetGauges {
        var latency: Gauge
        var loss: Gauge
        var impaired: Gauge
        var budgets: [QualityMeasure: Gauge]
    }

    private let states: [String: Gauge]
    private let targets = Mutex<[String: TargetGauges]>([:])

    init(in registry: PrometheusCollectorRegistry) {
        states = Dictionary(
            uniqueKeysWithValues: (QualityState.allCases.map(\.rawValue) + [ReachMetrics.noQuality]).map { state in
                (state, registry.makeGauge(descriptor: ReachMetrics.qualityName, labels: [("state", state)]))
            }
        )
        states[ReachMetrics.noQuality]?.set(to: 1)
    }

    func record(_ verdict: Verdict, in registry: PrometheusCollectorRegistry) {
        let state = verdict.quality?.state.rawValue ?? ReachMetrics.noQuality
        for (code, gauge) in states { gauge.set(to: code == state ? 1 : 0) }
        let judged = verdict.targets.filter { $0.qualityBudget != nil }
        targets.withLock { gauges in
            let names = Set(judged.map(\.name))
            for (name, series) in gauges where !names.contains(name) {
                for gauge in [series.latency, series.loss, series.impaired] + series.budgets.values {
                    registry.unregisterGauge(gauge)
                }
                gauges[name] = nil
            }
            for status in judged {
                guard let budget = status.qualityBudget else { continue }
                let series = gauges[status.name] ?? Self.makeGauges(status.name, budget: budget, in: registry)
                let measures = status.qualityMeasures
                series.latency.set(to: measures?.latency?.seconds ?? .nan)
                series.loss.set(to: measures?.loss ?? .nan)
                series.impaired.set(to: status.quality?.state == .impaired ? 1 : 0)
                for (measure, gauge) in series.budgets { gauge.set(to: budget.limit(measure) ?? .nan) }
                gauges[status.name] = series
            }
        }
    }

    private static func makeGauges(
        _ name: String,
        budget: QualityBudget,
        in registry: PrometheusCollectorRegistry
    ) -> TargetGauges {
        let target = [("target", name)]
        return TargetGauges(
            latency: registry.makeGauge(descriptor: ReachMetrics.targetQualityLatencyName, labels: target),
            loss: registry.makeGauge(descriptor: ReachMetrics.targetQualityLossName, labels: target),
            impaired: registry.makeGauge(descriptor: ReachMetrics.targetImpairedName, labels: target),
            budgets: Dictionary(
                uniqueKeysWithValues: QualityMeasure.allCases.filter { budget.limit($0) != nil }.map { measure in
                    (
                        measure,
                        registry.makeGauge(
                            descriptor: ReachMetrics.targetQualityBudgetName,
                            labels: target + [("measure", measure.rawValue)]
                        )
                    )
                }
            )
        )
    }
}

extension ReachMetrics {
    /// The `state` label of `reachd_quality` when the verdict has no quality.
    static let noQuality = "none"

    static var qualityName: MetricNameDescriptor {
        name(
            "reachd_quality",
            "How well the connection works beside the verdict, as a state set: 1 for good, impaired, or none (not connected, no budget, or not judged yet), 0 for the others."
        )
    }
    static var targetQualityLatencyName: MetricNameDescriptor {
        name(
            "reachd_target_quality_latency",
            unit: "seconds",
            "The median latency of the target's answered probes over its quality window; NaN when none answered."
        )
    }
    static var targetQualityLossName: MetricNameDescriptor {
        name(
            "reachd_target_quality_loss",
            unit: "ratio",
            "The share of the target's probes (or echoes) lost over its quality window, 0-1; NaN while it is empty."
        )
    }
    static var targetQualityBudgetName: MetricNameDescriptor {
        name(
            "reachd_target_quality_budget",
            "The target's quality budget per measure: latency and jitter in seconds, loss as a ratio 0-1."
        )
    }
    static var targetImpairedName: MetricNameDescriptor {
        name(
            "reachd_target_impaired",
            "1 while the target's quality is impaired (a measure past its budget, with hysteresis), else 0: a fleet counts hosts per target from it."
        )
    }
}
