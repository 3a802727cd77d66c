/// A burst of ICMP echoes to a host (`kind: icmp`): is it there, and how well does the path to it
/// carry packets? A probe is up when one echo of the burst comes back within the timeout; what
/// it measured (``EchoStatistics``) travels with the result.
package struct ICMPCheck: Sendable, Hashable {
    /// An address, or a name resolved at each probe (in the target's address family).
    package var host: String
    /// Echo requests per probe, spread over the interval (``spacing(interval:timeout:)``).
    package var packets: Int

    /// Five echoes a probe: one lost packet is 20 % loss, not a verdict.
    package static let defaultPackets = 5

    package init(host: String, packets: Int = defaultPackets) {
        self.host = host
        self.packets = max(1, packets)
    }

    /// The time between two echoes of a burst: the interval, or half the timeout when that is
    /// shorter, shared by the echoes, so that a burst covers the interval and its last echo has at
    /// least half the timeout to come back before the probe's deadline.
    package func spacing(interval: Duration, timeout: Duration) -> Duration {
        min(interval, timeout / 2) / packets
    }
}
