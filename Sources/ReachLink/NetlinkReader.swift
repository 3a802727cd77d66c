import CNetlink
import Glibc
import Logging
import ReachCore
import ReachPOSIX
import Synchronization

/// Counters the reader thread updates and any thread may read.
final class NetlinkCounters: Sendable {
    let overruns = Atomic<Int>(0)
    let foreignDatagrams = Atomic<Int>(0)
}

/// The body of the reader thread: enters the namespace, opens the socket, and loops on `poll` until
/// the doorbell rings, carrying out what the ``NetlinkSession`` decides.
struct NetlinkReader {
    /// Large enough for any datagram the kernel builds (dump skbs are capped at 32 KiB).
    static let bufferSize = 64 * 1024

    var namespacePath: String?
    var receiveBufferSize: Int
    var kindProbe: InterfaceKindProbe
    var logger: Logger
    var counters: NetlinkCounters
    var doorbell: ShutdownDoorbell
    var report: @Sendable (LinkSnapshot) -> Void

    /// Returns when the doorbell rings; throws when the socket cannot be used.
    func run() throws {
        if let namespacePath { try Self.enterNetworkNamespace(at: namespacePath) }
        let socket = try NetlinkSocket(receiveBufferSize: receiveBufferSize)
        logger.debug(
            "Netlink socket open",
            metadata: [
                "port": "\(socket.portID)", "receiveBuffer": "\(socket.receiveBufferSize)",
            ]
        )
        var session = NetlinkSession(kindProbe: kindProbe, portID: socket.portID, logger: logger)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.bufferSize, alignment: 8)
        defer { buffer.deallocate() }

        try perform(session.start(), on: socket)
        var descriptors = [
            pollfd(fd: socket.descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: doorbell.descriptor, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            // While a re-dump waits for the queue to drain, only peek: a quiet socket means drained.
            let timeout: Int32 = session.isAwaitingDrain ? 0 : -1
            let ready = poll(&descriptors, nfds_t(descriptors.count), timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                throw SystemCallError.current("poll")
            }
            if descriptors[1].revents != 0 { return }
            let events = descriptors[0].revents
            if events & Int16(POLLNVAL) != 0 { throw SystemCallError("poll(netlink)", code: EBADF) }
            guard ready == 0 || events & (Int16(POLLIN) | Int16(POLLERR)) != 0 else { continue }
            try perform(handle(socket.receive(into: buffer), in: &session, buffer: buffer), on: socket)
        }
    }

    private func handle(
        _ reception: NetlinkSocket.Reception,
        in session: inout NetlinkSession,
        buffer: UnsafeMutableRawBufferPointer
    ) throws -> [NetlinkSession.Action] {
        switch reception {
        case .interrupted:
            return []
        case .empty:
            return session.receiveQueueDrained()
        case .overrun:
            let actions = session.overrun()
            counters.overruns.store(session.overrunCount, ordering: .relaxed)
            return actions
        case .datagram(let count, let truncated, let sender):
            guard sender == 0 else {
                // Not the kernel: not parsed at all, only counted.
                let actions = try session.receive(NetlinkBatch(), from: sender)
                counters.foreignDatagrams.store(session.foreignDatagramCount, ordering: .relaxed)
                return actions
            }
            let batch = NetlinkMessageParser.parse(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            var actions = try session.receive(batch)
            if truncated { actions += session.overrun(truncatedDatagram: true) }
            return actions
        }
    }

    private func perform(_ actions: [NetlinkSession.Action], on socket: NetlinkSocket) throws {
        for action in actions {
            switch action {
            case .report(let snapshot):
                report(snapshot)
            case .requestDump(let kind, let sequence):
                logger.trace("Requesting netlink dump", metadata: ["kind": "\(kind)", "sequence": "\(sequence)"])
                try socket.requestDump(kind, sequence: sequence)
            }
        }
    }

    /// Moves this thread (only) into the namespace; sockets opened afterwards belong to it for good.
    private static func enterNetworkNamespace(at path: String) throws(SystemCallError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemCallError.current("open(\(path))") }
        defer { close(descriptor) }
        guard cnetlink_enter_network_namespace(descriptor) == 0 else { throw SystemCallError.current("setns(\(path))") }
    }
}
