import ReachSupport

/// The counted targets' quality, before it is dressed as the verdict's.
struct CountedQuality: Sendable, Hashable {
    var state: QualityState
    var fault: Fault?
    /// The impaired target that says where; `nil` when good.
    var index: Int?
}

extension QualityJudge {
    /// A judge for `target`'s budget; `nil` when it has none.
    init?(for target: ProbeTarget) {
        guard let budget = target.quality, budget.judgesAnything else { return nil }
        self.init(budget: budget, interval: target.interval)
    }
}

/// Quality beside the verdict (``VerdictQuality``): each target's judge takes its results, and the
/// targets the policy counts (the healthy ones) make the verdict's quality. It never changes the
/// state, the reason or the fault, and it is never a transition: no callback runs for it.
extension ConnectivityCombiner {
    /// Judges target `index`'s quality with `result`; returns whether its state or measures past
    /// their budget changed.
    mutating func judgeQuality(_ index: Int, _ result: ProbeResult, at now: WallTime) -> Bool {
        guard judges[index] != nil else { return false }
        let changed = judges[index]!.evaluate(QualitySample(result, at: now))
        verdict.targets[index].quality = judges[index]!.quality
        verdict.targets[index].qualityMeasures = judges[index]!.measures
        if changed { countedQualityIsStale = true }
        return changed
    }

    /// Forgets every window (a regained link, a wake: another path, or hours later); returns
    /// whether any target had a quality.
    mutating func resetQuality() -> Bool {
        judges = targets.map(QualityJudge.init(for:))
        var changed = false
        for index in verdict.targets.indices {
            changed = changed || verdict.targets[index].quality != nil
            verdict.targets[index].quality = nil
            if verdict.targets[index].qualityBudget != nil {
                verdict.targets[index].qualityMeasures = QualityMeasures()
            }
        }
        countedQualityIsStale = true
        return changed
    }

    /// The verdict's quality now, keeping `previous`'s `since` while its state and place stand.
    mutating func verdictQuality(previous: VerdictQuality?, at now: WallTime) -> VerdictQuality? {
        if countedQualityIsStale {
            countedQuality = judgeCountedTargets()
            countedQualityIsStale = false
        }
        guard let counted = countedQuality else { return nil }
        let target = counted.index.map { verdict.targets[$0] }
        let standing = previous.map { $0.state == counted.state && $0.fault == counted.fault } ?? false
        return VerdictQuality(
            state: counted.state,
            fault: counted.fault,
            target: target?.name,
            exceeded: target?.quality?.exceeded ?? [],
            since: standing ? previous!.since : now
        )
    }

    /// Impaired when a healthy target with a budget is impaired: at the first hop when one of them
    /// is a default gateway (`link` behind a radio, else `gateway`), else where the first one in
    /// configuration order is (`server`; `dns` for a `dns` target, whose server is the resolver, as
    /// ``Fault/of(_:kind:)`` says for the verdict). A `dns` target asking the gateway's resolver
    /// measures the resolver, not the first hop. Good when every healthy target with a budget is
    /// good; `nil` while one of them has no quality yet, or none has a budget.
    private func judgeCountedTargets() -> CountedQuality? {
        var gateways: [IPAddress: InterfaceKind]?
        var (anyGood, undecided) = (false, false)
        var firstImpaired: Int?
        // By index: enumerating the statuses would copy each, names and results with it.
        for index in verdict.targets.indices
        where verdict.targets[index].health == .healthy && verdict.targets[index].qualityBudget != nil {
            switch verdict.targets[index].quality?.state {
            case .impaired:
                if targets[index].kind != "dns", let address = literalAddresses[index] {
                    gateways = gateways ?? gatewayKinds()
                    if let kind = gateways?[address] {
                        return CountedQuality(state: .impaired, fault: kind.isRadio ? .link : .gateway, index: index)
                    }
                }
                firstImpaired = firstImpaired ?? index
            case .good: anyGood = true
            case nil: undecided = true
            }
        }
        if let firstImpaired {
            let fault = Fault.of(.server, kind: targets[firstImpaired].kind)
            return CountedQuality(state: .impaired, fault: fault, index: firstImpaired)
        }
        return anyGood && !undecided ? CountedQuality(state: .good) : nil
    }

    /// The default gateways of the current links, with the kind of interface each is reached over.
    private func gatewayKinds() -> [IPAddress: InterfaceKind] {
        var kinds: [IPAddress: InterfaceKind] = [:]
        for interface in links?.interfaces ?? [] {
            for route in interface.routes where route.destination.isDefault {
                if let gateway = route.gateway { kinds[gateway] = interface.kind }
            }
        }
        return kinds
    }
}

extension InterfaceKind {
    /// Wi-Fi or mobile broadband: where the first hop's slowness or loss is the radio link's.
    var isRadio: Bool { self == .wifi || self == .wwan }
}
