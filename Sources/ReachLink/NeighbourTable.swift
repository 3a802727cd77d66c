import CNetlink
import Glibc
import ReachCore
import ReachPOSIX
import ReachSupport

/// One entry of the kernel's neighbour table (ARP for IPv4, neighbour discovery for IPv6): what
/// the link layer knows of a host on the link, as `ip neigh` shows it.
package struct NeighbourState: Sendable, Hashable, CustomStringConvertible {
    /// `NUD_*` bits of `ndm_state`.
    package var bits: UInt16

    package init(bits: UInt16) { self.bits = bits }

    static let incomplete: UInt16 = 0x01, reachable: UInt16 = 0x02, stale: UInt16 = 0x04, delay: UInt16 = 0x08
    static let probe: UInt16 = 0x10, failed: UInt16 = 0x20, noARP: UInt16 = 0x40, permanent: UInt16 = 0x80

    /// `FAILED` or `INCOMPLETE`: the host does not answer at the link layer. An entry reaches it
    /// only late: it stays `REACHABLE` for base_reachable_time (15–45 s) after the host falls
    /// silent, then goes `STALE`, `DELAY` and `PROBE` before `FAILED`.
    package var isUnreachable: Bool { bits & (Self.failed | Self.incomplete) != 0 }

    package var description: String {
        let names: [(UInt16, String)] = [
            (Self.incomplete, "INCOMPLETE"), (Self.reachable, "REACHABLE"), (Self.stale, "STALE"),
            (Self.delay, "DELAY"),
            (Self.probe, "PROBE"), (Self.failed, "FAILED"), (Self.noARP, "NOARP"), (Self.permanent, "PERMANENT"),
        ]
        let set = names.filter { bits & $0.0 != 0 }.map(\.1)
        return set.isEmpty ? "NONE" : set.joined(separator: ",")
    }
}

/// Reads the kernel's neighbour table with an rtnetlink dump (`RTM_GETNEIGH`), which needs no
/// privileges: the fallback evidence for a silent gateway where ping sockets are not allowed.
package enum NeighbourTable {
    private static let getNeighbour: UInt16 = 30  // RTM_GETNEIGH
    private static let newNeighbour: UInt16 = 28  // RTM_NEWNEIGH
    private static let destinationAttribute: UInt16 = 1  // NDA_DST
    private static let headerSize = 12  // struct ndmsg

    /// The state of `address`'s entry on the interface with `interfaceIndex`; `nil` when it has
    /// none (never resolved, or expired) or the table cannot be read. Runs on a thread of its own.
    package static func state(of address: IPAddress, interfaceIndex: Int) async -> NeighbourState? {
        await withCheckedContinuation { continuation in
            do {
                try DedicatedThread.start(named: "reachd-neigh") {
                    continuation.resume(
                        returning: (try? dump(family: address.family))?.first {
                            $0.index == interfaceIndex && $0.address == address
                        }?.state
                    )
                }
            } catch {
                continuation.resume(returning: nil)
            }
        }
    }

    /// One parsed neighbour entry.
    struct Entry: Sendable, Hashable {
        var index: Int
        var address: IPAddress
        var state: NeighbourState
    }

    /// Every entry of `family`, read within a second.
    static func dump(family: IPFamily) throws(SystemCallError) -> [Entry] {
        let socket = try NetlinkSocket(receiveBufferSize: 1 << 17, groups: 0)
        var body = [UInt8](repeating: 0, count: headerSize)
        body[0] = UInt8(family == .ipv4 ? AF_INET : AF_INET6)
        try socket.send(
            NetlinkSocket.message(
                type: getNeighbour,
                flags: UInt16(NLM_F_REQUEST | NLM_F_DUMP),
                sequence: 1,
                body: body
            )
        )
        var entries: [Entry] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 8)
        defer { buffer.deallocate() }
        let deadline = ContinuousClock.now + .seconds(1)
        while ContinuousClock.now < deadline {
            switch try socket.receive(into: buffer) {
            case .datagram(let count, _, let sender) where sender == 0:
                let (found, done) = parse(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                entries += found
                if done { return entries }
            case .datagram, .interrupted, .overrun:
                continue
            case .empty:
                var poller = pollfd(fd: socket.descriptor, events: Int16(POLLIN), revents: 0)
                _ = poll(&poller, 1, 100)
            }
        }
        return entries
    }

    /// The entries in one datagram, and whether it ended the dump (`NLMSG_DONE` or an error).
    static func parse(_ datagram: UnsafeRawBufferPointer) -> (entries: [Entry], done: Bool) {
        var entries: [Entry] = []
        var offset = 0
        let reader = ByteReader(datagram)
        while reader.count - offset >= NetlinkHeader.size {
            guard let length = reader.load(UInt32.self, at: offset).map(Int.init), length >= NetlinkHeader.size,
                length <= reader.count - offset,
                let type = reader.load(UInt16.self, at: offset + 4)
            else { break }
            if type == UInt16(NLMSG_DONE) || type == UInt16(NLMSG_ERROR) { return (entries, true) }
            let message = reader.slice(offset + NetlinkHeader.size, offset + length)
            if type == newNeighbour, let entry = entry(message) { entries.append(entry) }
            offset += NetlinkMessageParser.alignedToFour(length)
        }
        return (entries, false)
    }

    private static func entry(_ message: ByteReader) -> Entry? {
        guard message.count >= headerSize, let index = message.load(Int32.self, at: 4),
            let state = message.load(UInt16.self, at: 8)
        else { return nil }
        var offset = headerSize
        while message.count - offset >= 4 {
            guard let length = message.load(UInt16.self, at: offset).map(Int.init), length >= 4,
                length <= message.count - offset,
                let type = message.load(UInt16.self, at: offset + 2)
            else { return nil }
            if type & 0x3FFF == destinationAttribute,
                let address = IPAddress(bytes: message.slice(offset + 4, offset + length).bytes())
            {
                return Entry(index: Int(index), address: address, state: NeighbourState(bits: state))
            }
            offset += NetlinkMessageParser.alignedToFour(length)
        }
        return nil
    }
}
