import ReachCore
import ReachSupport

extension StatusDocument {
    /// One measure past its budget: latency and jitter in seconds, loss as a share 0–1.
    package struct QualityFinding: Codable, Sendable, Hashable {
        /// `latency`, `loss` or `jitter`.
        package var measure: String
        package var value: Double
        package var budget: Double
    }

    /// The verdict's quality: `good`, or `impaired` with where and how bad.
    package struct Quality: Codable, Sendable, Hashable {
        /// `good` or `impaired`.
        package var state: String
        /// Where it is slow: `link` or `gateway` when the default gateway's own target is
        /// impaired, else `server` (`dns` for a `dns` target); `null` when good.
        @Nullable package var fault: String? = nil
        /// The impaired target that says so; `null` when good.
        @Nullable package var target: String? = nil
        /// Its measures past their budget; empty when good.
        package var exceeded: [QualityFinding] = []
        /// When `state` or `fault` last changed, RFC 3339 in UTC with milliseconds.
        package var since: String
    }

    /// A target's quality.
    package struct TargetQuality: Codable, Sendable, Hashable {
        /// `good` or `impaired`.
        package var state: String
        package var exceeded: [QualityFinding] = []
        /// When `state` last changed.
        package var since: String
    }

    /// A target's quality window: what it measures now, and what it is allowed.
    package struct QualityWindow: Codable, Sendable, Hashable {
        /// The median latency of the window's answered probes; `null` when none answered.
        @Nullable package var latencySeconds: Double? = nil
        /// The window's share of lost probes (or echoes), 0–1; `null` while it is empty.
        @Nullable package var loss: Double? = nil
        /// The mean jitter of its echo bursts; `null` for targets that do not measure it.
        @Nullable package var jitterSeconds: Double? = nil
        /// How many probes the window holds.
        package var samples: Int
        package var budget: QualityBudgetDocument

        enum CodingKeys: String, CodingKey {
            case latencySeconds = "latency_seconds"
            case loss
            case jitterSeconds = "jitter_seconds"
            case samples, budget
        }
    }

    /// A target's budgets (`quality:`); `null` for a measure without one.
    package struct QualityBudgetDocument: Codable, Sendable, Hashable {
        @Nullable package var latencySeconds: Double? = nil
        @Nullable package var loss: Double? = nil
        @Nullable package var jitterSeconds: Double? = nil
        package var windowSeconds: Double

        enum CodingKeys: String, CodingKey {
            case latencySeconds = "latency_seconds"
            case loss
            case jitterSeconds = "jitter_seconds"
            case windowSeconds = "window_seconds"
        }
    }

    /// `connected, slow: server 412 ms (budget 300 ms)`: the headline's words for an impaired
    /// connection; `nil` unless it is impaired.
    package var qualityPhrase: String? {
        guard let quality, quality.state == QualityState.impaired.rawValue else { return nil }
        let adjectives = quality.exceeded.map { finding in
            switch QualityMeasure(rawValue: finding.measure) {
            case .latency: "slow"
            case .loss: "lossy"
            case .jitter: "unsteady"
            case nil: finding.measure
            }
        }
        let place =
            quality.fault == Fault.server.rawValue || quality.fault == nil
            ? quality.target ?? "server" : "\(quality.fault!) (target \(quality.target ?? "?"))"
        let measures = quality.exceeded.map(\.phrase).joined(separator: ", ")
        let words = adjectives.isEmpty ? "impaired" : adjectives.joined(separator: " and ")
        return "\(words): \(place)" + (measures.isEmpty ? "" : " \(measures)")
    }
}

extension StatusDocument.QualityFinding {
    init(_ finding: QualityFinding) {
        self.init(measure: finding.measure.rawValue, value: finding.value, budget: finding.budget)
    }

    /// `412 ms (budget 300 ms)`, `12 % lost (budget 5 %)`, `jitter 80 ms (budget 50 ms)`: what
    /// `reachctl status` and the status page (and its script, alike) say of a measure past its budget.
    package var phrase: String {
        switch QualityMeasure(rawValue: measure) {
        case .loss: "\(Self.percent(value)) lost (budget \(Self.percent(budget)))"
        case .jitter: "jitter \(Self.milliseconds(value)) (budget \(Self.milliseconds(budget)))"
        case .latency, nil: "\(Self.milliseconds(value)) (budget \(Self.milliseconds(budget)))"
        }
    }

    private static func milliseconds(_ seconds: Double) -> String { "\(Int((seconds * 1000).rounded())) ms" }

    /// A share as a percentage with at most one decimal: `12 %`, `0.5 %`.
    package static func percent(_ share: Double) -> String {
        let tenths = (share * 1000).rounded() / 10
        return tenths == tenths.rounded() ? "\(Int(tenths)) %" : "\(tenths) %"
    }

    var finding: QualityFinding? {
        QualityMeasure(rawValue: measure).map { QualityFinding(measure: $0, value: value, budget: budget) }
    }
}

extension StatusDocument.Quality {
    init(_ quality: VerdictQuality) {
        self.init(
            state: quality.state.rawValue,
            fault: quality.fault?.code,
            target: quality.target,
            exceeded: quality.exceeded.map(StatusDocument.QualityFinding.init),
            since: RFC3339.string(from: quality.since)
        )
    }

    /// The quality described; `nil` for a state this version does not know.
    var verdictQuality: VerdictQuality? {
        guard let state = QualityState(rawValue: state) else { return nil }
        return VerdictQuality(
            state: state,
            fault: fault.flatMap(Fault.init(rawValue:)),
            target: target,
            exceeded: exceeded.compactMap(\.finding),
            since: RFC3339.wallTime(from: since) ?? WallTime(sinceEpoch: .zero)
        )
    }
}

extension StatusDocument.TargetQuality {
    /// As the verdict's quality is written, without a place.
    init(_ quality: TargetQuality) {
        let written = StatusDocument.Quality(
            VerdictQuality(state: quality.state, exceeded: quality.exceeded, since: quality.since)
        )
        self.init(state: written.state, exceeded: written.exceeded, since: written.since)
    }

    var targetQuality: TargetQuality? {
        StatusDocument.Quality(state: state, exceeded: exceeded, since: since).verdictQuality.map {
            TargetQuality(state: $0.state, exceeded: $0.exceeded, since: $0.since)
        }
    }
}

extension StatusDocument.QualityWindow {
    init?(measures: QualityMeasures?, budget: QualityBudget?) {
        guard let measures, let budget else { return nil }
        self.init(
            latencySeconds: measures.latency?.seconds,
            loss: measures.loss,
            jitterSeconds: measures.jitter?.seconds,
            samples: measures.samples,
            budget: StatusDocument.QualityBudgetDocument(
                latencySeconds: budget.latency?.seconds,
                loss: budget.loss,
                jitterSeconds: budget.jitter?.seconds,
                windowSeconds: budget.window.seconds
            )
        )
    }
}

extension VerdictFact {
    /// The quality's words on the status page and in `reachctl status`.
    package static let qualityWords = [
        QualityState.good.rawValue: "Every counted target answers within its budgets.",
        QualityState.impaired.rawValue: "Connected, but a counted target is slow or lossy.",
    ]
}
