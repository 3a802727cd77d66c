/// The path half of the combining rules (see ``ConnectivityCombiner``): the gateway and upstream
/// evidence that place a target's silence on the gateway, the internet connection or the server
/// (``Fault/init(_:gateway:upstream:)``).
extension ConnectivityCombiner {
    /// Takes what the default gateway showed; `nil` forgets it (the targets pass again, or it
    /// could not be asked).
    mutating func apply(gateway finding: GatewayFinding?, at now: WallTime) -> Change {
        guard finding != gatewayFinding else { return Change(accepted: false) }
        gatewayFinding = finding
        return settle(control: probeControl, at: now)
    }

    /// Takes what the upstream reference showed; `nil` forgets it.
    mutating func apply(upstream finding: UpstreamFinding?, at now: WallTime) -> Change {
        guard finding != upstreamFinding else { return Change(accepted: false) }
        upstreamFinding = finding
        return settle(control: probeControl, at: now)
    }
}
