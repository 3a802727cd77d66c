import ReachCore
import ReachSupport

extension StatusDocument {
    /// One uplink's own reachability: the targets probed out of it alone (`SO_BINDTODEVICE`), at
    /// their cadence and deadline. It never changes the document's `state`, which follows the
    /// system's routes: it tells whether another uplink would do.
    package struct Interface: Codable, Sendable, Hashable {
        package var name: String
        /// Whether the targets answer out of this uplink as the policy requires; `null` until they
        /// have, or where the kernel refuses to bind a socket to a device (Linux before 5.7).
        @Nullable package var reachable: Bool? = nil
        /// The first failing target's failure code out of this uplink; `null` unless `reachable` is false.
        @Nullable package var reason: String? = nil
        /// Where the path out of this uplink breaks (`dns`, `server`, ...); `null` unless `reachable` is false.
        @Nullable package var fault: String? = nil
        /// The latest successful probe's duration out of this uplink, of the first target probed on it.
        @Nullable package var latencySeconds: Double? = nil

        enum CodingKeys: String, CodingKey {
            case name, reachable, reason, fault
            case latencySeconds = "latency_seconds"
        }
    }

    /// The uplinks whose targets answer out of them alone, in index order: `REACHD_REACHABLE_INTERFACES`.
    package var reachableInterfaces: [String] {
        interfaces.filter { $0.reachable == true }.map(\.name)
    }
}

extension StatusDocument.Interface {
    init(reachability: InterfaceReachability) {
        self.init(
            name: reachability.name,
            reachable: reachability.reachable,
            reason: reachability.reason?.code,
            fault: reachability.fault?.code,
            latencySeconds: reachability.latency?.seconds
        )
    }

    /// The uplink described; a reason this version does not know reads as `protocol_error`.
    var reachability: InterfaceReachability {
        let failure = reason.map { FailureReason(code: $0) ?? .protocolError }
        return InterfaceReachability(
            name: name,
            reachable: reachable,
            reason: failure,
            fault: fault.flatMap(Fault.init(rawValue:)),
            latency: latencySeconds.map { .seconds($0) }
        )
    }
}
