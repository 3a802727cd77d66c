import ReachSupport

/// Whether the targets answer out of one uplink, bound to it whatever the routes prefer
/// (`probe.per_interface`).
///
/// It never changes the verdict: a program's traffic goes where the routes send it, so the
/// verdict follows the system's own routing. It answers the question a multi-homed host asks next:
/// "and would the other uplink work?"
public struct InterfaceReachability: Sendable, Hashable {
    public var name: String
    /// Whether the targets answer out of this uplink as the policy requires; `nil` until they
    /// have, or where the kernel refuses to bind a socket to a device (before Linux 5.7, without
    /// `CAP_NET_RAW`).
    public var reachable: Bool?
    /// The first failing target's failure out of this uplink, when `reachable` is false.
    public var reason: FailureReason?
    /// Where the path out of this uplink breaks, when `reachable` is false.
    public var fault: Fault?
    /// The latest successful probe's duration out of this uplink, of the first target probed on it.
    public var latency: Duration?

    public init(
        name: String,
        reachable: Bool? = nil,
        reason: FailureReason? = nil,
        fault: Fault? = nil,
        latency: Duration? = nil
    ) {
        self.name = name
        self.reachable = reachable
        self.reason = reason
        self.fault = fault
        self.latency = latency
    }

    /// Whether `other` says something else about the uplink; a new latency alone is not news.
    func differsInMeaning(from other: InterfaceReachability) -> Bool {
        (name, reachable, reason, fault) != (other.name, other.reachable, other.reason, other.fault)
    }
}

extension ProbeFailure {
    /// The detail of a probe held to one family whose name has no address of it: not a broken
    /// family, one the name does not offer.
    package static let noAddressOfFamily = "no address of the family the target is limited to"

    /// The detail of a probe that could not be bound to its uplink because the kernel refuses
    /// `SO_BINDTODEVICE` without privileges (Linux before 5.7): it reports `cancelled`, no evidence,
    /// and the uplink's reachability stays unknown.
    package static let bindingRefused =
        "the kernel refuses to bind a socket to an interface without CAP_NET_RAW (Linux before 5.7)"

    /// Whether the probe failed because the name has no address of the family it was held to.
    package var isNoAddressOfFamily: Bool { reason == .networkUnreachable && detail == Self.noAddressOfFamily }
}

extension Verdict {
    /// The families some target answered over while it failed over these: a broken IPv6 (or IPv4)
    /// path that Happy Eyeballs hides. The verdict stays connected; this says what is wrong.
    package var degradedFamilies: [IPFamily] {
        Set(targets.flatMap(\.degradedFamilies)).sorted()
    }
}
