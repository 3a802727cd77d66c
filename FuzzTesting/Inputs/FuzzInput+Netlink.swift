import ReachCore
import ReachLink

extension FuzzInput {
    /// rtnetlink datagrams from the kernel (or anyone who can write to our socket), through the
    /// parser, the dump session and the interface table (`NetlinkReplay`), and the neighbour reader.
    ///
    /// The input is cut into datagrams after each `NLMSG_DONE`, so that one input can hold the
    /// three dumps a session asks for (links, addresses, routes: sequences 1, 2, 3 from port 4242)
    /// and the events after them. Replayed twice, it must give the same outcome; the parser can
    /// find at most one message or problem per 16 bytes.
    package static func netlink(_ bytes: [UInt8]) {
        let datagrams = netlinkDatagrams(bytes)
        let outcome = NetlinkReplay.replay(datagrams)
        require(outcome == NetlinkReplay.replay(datagrams), "replaying the same datagrams gave another outcome")
        require(
            outcome.messages + outcome.problems <= bytes.count / 16 + 2 * datagrams.count,
            "more messages than headers fit"
        )
        for snapshot in outcome.snapshots {
            require(
                Set(snapshot.interfaces.map(\.index)).count == snapshot.interfaces.count,
                "an interface index twice in a snapshot"
            )
        }
        // The whole input as one datagram too: what a single recv() could return.
        _ = NetlinkReplay.replay([bytes])
    }

    /// Cuts after each message of type `NLMSG_DONE` (3); once a length is unusable, the rest is one datagram.
    static func netlinkDatagrams(_ bytes: [UInt8]) -> [[UInt8]] {
        var datagrams: [[UInt8]] = []
        var start = 0
        var offset = 0
        while bytes.count - offset >= 16 {
            let length =
                Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 3])
                << 24
            guard length >= 16, length <= bytes.count - offset else { break }
            let type = Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8
            offset += (length + 3) & ~3
            if type == 3 {
                datagrams.append(Array(bytes[start..<min(offset, bytes.count)]))
                start = min(offset, bytes.count)
            }
        }
        if start < bytes.count || datagrams.isEmpty { datagrams.append(Array(bytes[start...])) }
        return datagrams
    }
}
