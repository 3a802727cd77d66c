import PropertyBased
import ReachTesting
import Testing

@testable import ReachCore

/// Random sequences of link changes, probe results (fresh and stale), sleeps and probe requests,
/// against random policies and damping, checked against the combiner's stated rules after every step.
@Suite("Combiner: properties")
struct CombinerPropertyTests {
    static let snapshots: [LinkSnapshot] = [
        .of(.usable("eth0")),
        .of(.usable("wlan0", index: 3)),
        .offline,
        .of(InterfaceFacts.usable("eth0").withoutDefaultRoute),
        .of(InterfaceFacts.usable("eth0").withoutAddresses),
    ]
    static let names = ["a", "b", "c"]

    enum Action: CustomStringConvertible {
        case links(Int)
        case result(target: String, ProbeResult, stale: Bool)
        case sleep(Bool)
        case probeNow

        init(code: Int) {
            switch code {
            case 0..<5: self = .links(code)
            case 5..<17:
                let target = CombinerPropertyTests.names[(code - 5) % 3]
                switch (code - 5) / 3 {
                case 0: self = .result(target: target, .ok(target), stale: false)
                case 1: self = .result(target: target, .refused(target), stale: false)
                case 2:
                    self = .result(
                        target: target,
                        .failure(target, .timeout, phase: .head, latency: .seconds(2)),
                        stale: false
                    )
                default: self = .result(target: target, .ok(target), stale: true)
                }
            case 17: self = .sleep(true)
            case 18: self = .sleep(false)
            default: self = .probeNow
            }
        }

        var description: String {
            switch self {
            case .links(let index): "links(\(index))"
            case .result(let target, let result, let stale):
                "\(stale ? "stale " : "")\(target):\(result.failure?.reason.code ?? "ok")"
            case .sleep(let sleeping): sleeping ? "sleep" : "wake"
            case .probeNow: "probeNow"
            }
        }
    }

    static func policy(_ code: Int) -> TargetPolicy {
        [.all, .any, .quorum(1), .quorum(2), .quorum(3)][code]
    }

    @Test func theCombinerKeepsItsRules() async {
        await offPool { await Self.checkTheRules() }
    }

    private static func checkTheRules() async {
        await propertyCheck(
            count: 400,
            input: Gen.int(in: 0...4),
            Gen.int(in: 0...8).array(of: 3),
            Gen.int(in: 0...19).array(of: 1...80)
        ) { policyCode, dampingCodes, actionCodes in
            let targets = zip(Self.names, dampingCodes).map { name, code in
                ProbeTarget.http(
                    name,
                    hysteresis: Hysteresis(failuresBeforeDown: code % 3 + 1, successesBeforeUp: code / 3 + 1)
                )
            }
            let policy = Self.policy(policyCode)
            var driver = CombinerDriver(targets, policy: policy)
            var lastDecided: ConnectivityState?
            var epoch = driver.combiner.epoch
            var requests = driver.combiner.probeControl.immediateProbeRequests

            for action in actionCodes.map(Action.init(code:)) {
                let before = driver.verdict
                switch action {
                case .links(let index):
                    driver.links(Self.snapshots[index])
                case .result(_, let result, let stale):
                    let stamp =
                        stale ? ProbeEpoch(rawValue: driver.combiner.epoch.rawValue &- 1) : driver.combiner.epoch
                    driver.result(result, epoch: stamp)
                    if stale { #expect(!driver.lastChange.accepted, "a stale result was used: \(action)") }
                case .sleep(let sleeping):
                    driver.sleeping(sleeping)
                case .probeNow:
                    driver.lastChange = driver.combiner.requestImmediateProbe(at: driver.now)
                }
                let verdict = driver.verdict
                let combiner = driver.combiner

                // Connected exactly when the link is usable and the policy holds.
                let healthy = verdict.targets.count { $0.health == .healthy }
                let required =
                    switch policy {
                    case .all: targets.count
                    case .any: 1
                    case .quorum(let k): k
                    }
                if verdict.state == .connected {
                    #expect(combiner.isLinkUsable && healthy >= required, "connected without grounds after \(action)")
                }
                if combiner.isLinkUsable && healthy >= required {
                    #expect(verdict.state == .connected, "grounds for connected but \(verdict.state) after \(action)")
                }
                if !combiner.isLinkUsable {
                    #expect(verdict.state == .disconnected && [.noLink, .noAddress, .noRoute].contains(verdict.reason))
                    #expect(combiner.probeControl.isSuspended)
                }

                // Transitions: reported exactly when the state crosses between connected and disconnected.
                if verdict.state != .unknown {
                    let expected: TransitionDirection? =
                        lastDecided != nil && lastDecided != verdict.state
                        ? (verdict.state == .connected ? .restored : .lost) : nil
                    #expect(driver.lastChange.transition == expected, "after \(action)")
                    lastDecided = verdict.state
                } else {
                    #expect(lastDecided == nil, "the verdict went back to unknown after \(action)")
                }

                // News whenever the state or reason moves; `since` moves only with the state.
                if before.state != verdict.state || before.reason != verdict.reason {
                    #expect(driver.lastChange.isNews)
                }
                if before.state == verdict.state { #expect(before.since == verdict.since) }

                // Damping: a health change away from a decided health needs enough consecutive results.
                for (index, (old, new)) in zip(before.targets, verdict.targets).enumerated()
                where old.health != new.health {
                    if old.health == .healthy, new.health == .unhealthy {
                        #expect(new.consecutiveFailures >= targets[index].hysteresis.failuresBeforeDown)
                    }
                    if old.health == .unhealthy, new.health == .healthy {
                        #expect(new.consecutiveSuccesses >= targets[index].hysteresis.successesBeforeUp)
                    }
                }

                // The epoch and the probe requests only move forward.
                #expect(combiner.epoch >= epoch)
                #expect(combiner.probeControl.immediateProbeRequests >= requests)
                epoch = combiner.epoch
                requests = combiner.probeControl.immediateProbeRequests
            }
        }
    }
}
