import Logging
import ReachCore

/// Netlink datagrams replayed through the code that reads the kernel's, without a socket: the
/// parser, the session that pairs dump replies with its requests, the interface table behind it,
/// and the neighbour-table reader.
///
/// The seam the fuzz targets (`FuzzTesting`, `fuzz-netlink`) feed outside bytes through: the same
/// code ``NetlinkLinkSource`` runs, so a crash here is a crash of the daemon.
package enum NetlinkReplay {
    /// What the replayed datagrams amounted to.
    package struct Outcome: Sendable, Hashable {
        /// The snapshots the session reported, in order.
        package var snapshots: [LinkSnapshot]
        /// The neighbour entries each datagram held, read as a neighbour dump.
        package var neighbourEntries: Int
        /// Messages decoded and problems skipped by the parser, over all datagrams.
        package var messages: Int
        package var problems: Int
        /// The session gave up: five dumps failed in a row.
        package var gaveUp: Bool
    }

    /// Starts a session (which asks for its first dumps), hands it each datagram as from the
    /// kernel, and reads each as a neighbour dump too.
    package static func replay(_ datagrams: [[UInt8]]) -> Outcome {
        var session = NetlinkSession(
            kindProbe: .netlinkOnly,
            portID: 4242,
            logger: Logger(label: "reachd.fuzz") { _ in SwiftLogNoOpLogHandler() }
        )
        var outcome = Outcome(snapshots: [], neighbourEntries: 0, messages: 0, problems: 0, gaveUp: false)
        var actions = session.start()
        for datagram in datagrams {
            let batch = NetlinkMessageParser.parse(datagram)
            outcome.messages += batch.messages.count
            outcome.problems += batch.problems.count
            do {
                actions += try session.receive(batch)
            } catch {
                outcome.gaveUp = true
                break
            }
            outcome.neighbourEntries += datagram.withUnsafeBytes { NeighbourTable.parse($0).entries.count }
        }
        for case .report(let snapshot) in actions { outcome.snapshots.append(snapshot) }
        return outcome
    }
}
