import Logging
import ReachCore

/// The adapter's decisions, free of I/O: which datagrams change the table, when to report a
/// snapshot, and which dumps to request next.
///
/// The reader thread feeds it parsed batches and overruns and carries out the actions it returns,
/// in order. Keeping this apart from the socket lets tests drive every path with captured bytes.
struct NetlinkSession {
    enum Action: Sendable, Hashable {
        case report(LinkSnapshot)
        case requestDump(DumpKind, sequence: UInt32)
    }

    /// Dumps that failed one after another (`NLMSG_ERROR` or a negative `NLMSG_DONE`) before giving up.
    static let maximumConsecutiveDumpFailures = 5

    private var table: InterfaceTable
    private var scheduler = DumpScheduler()
    private let portID: UInt32
    private let logger: Logger

    private var kindsAwaitingFirstDump = Set(DumpKind.allCases)
    private var lastReported: LinkSnapshot?
    private var consecutiveDumpFailures = 0
    /// Overruns since the last time the table was known to be reconciled.
    private var overrunsInBurst = 0

    /// After an overrun, the re-dump waits until the receive queue has been seen empty. The kernel
    /// signals `ENOBUFS` only when a socket *becomes* congested and stays congested, dropping
    /// notifications silently, until its queue empties; a dump taken before that could miss changes
    /// whose notifications are dropped afterwards without a new `ENOBUFS`.
    private(set) var isAwaitingDrain = false

    /// Every `ENOBUFS` the kernel reported, for the metric.
    private(set) var overrunCount = 0
    private var parseProblemCount = 0
    /// Datagrams dropped because a process, not the kernel, sent them.
    private(set) var foreignDatagramCount = 0
    /// Datagram parts skipped as malformed plus messages rejected as impossible.
    var malformedCount: Int { parseProblemCount + table.rejectedCount }

    init(kindProbe: InterfaceKindProbe, portID: UInt32, logger: Logger) {
        self.table = InterfaceTable(kindProbe: kindProbe)
        self.portID = portID
        self.logger = logger
    }

    /// The first snapshot is complete: links, addresses and routes have each been dumped once.
    var hasReportedInitialSnapshot: Bool { lastReported != nil }

    /// Starts the initial full dump.
    mutating func start() -> [Action] {
        scheduler.requestFullResync()
        return nextDump()
    }

    /// Applies one datagram's messages, then reports once if anything changed, then asks for the next dump.
    ///
    /// - Parameter sender: The port id the datagram came from (`nl_pid` of its source address).
    ///   Only the kernel (port 0) speaks for the link table: any local process may unicast a
    ///   forged "link up" to our port, so a datagram from anyone else is dropped, counted and
    ///   logged (a warning for the first, then at debug level, so a flood cannot flood the log).
    mutating func receive(_ batch: NetlinkBatch, from sender: UInt32 = 0) throws(NetlinkDumpFailure) -> [Action] {
        guard sender == 0 else {
            foreignDatagramCount += 1
            let metadata: Logger.Metadata = ["sender": "\(sender)", "dropped": "\(foreignDatagramCount)"]
            if foreignDatagramCount == 1 {
                logger.warning("Dropped a netlink datagram not sent by the kernel", metadata: metadata)
            } else {
                logger.debug("Dropped a netlink datagram not sent by the kernel", metadata: metadata)
            }
            return []
        }
        if !batch.problems.isEmpty {
            parseProblemCount += batch.problems.count
            logger.warning("Skipped malformed netlink data", metadata: ["problems": "\(batch.problems)"])
        }
        var needsRouteDump = false
        for message in batch.messages {
            let header = message.header
            if scheduler.isReply(sequence: header.sequence, portID: header.portID, ourPortID: portID) {
                try handleDumpReply(message)
            } else {
                let changes = table.apply(message)
                if !changes.isEmpty { needsRouteDump = true }
            }
        }
        var actions = reportIfChanged()
        // Routes through a link that went down vanish without RTM_DELROUTE: look again, but only
        // after the loss has been reported.
        if needsRouteDump { scheduler.request(.routes) }
        actions += nextDump()
        return actions
    }

    /// `ENOBUFS` (or a datagram too large for the buffer): notifications were lost, so everything is re-dumped.
    mutating func overrun(truncatedDatagram: Bool = false) -> [Action] {
        if truncatedDatagram {
            logger.warning("A netlink datagram did not fit the receive buffer; re-dumping")
        } else {
            overrunCount += 1
            if overrunsInBurst == 0 {
                logger.warning(
                    "Netlink receive queue overflowed (ENOBUFS), events were lost; re-dumping links, addresses and routes"
                )
            }
        }
        overrunsInBurst += 1
        // The running dump's end may be what was lost: the kernel answers a dump it could not start
        // (ENOBUFS itself, on a full queue) with an error message that a full queue drops too, and
        // then the scheduler would wait for it forever. So the dump is abandoned and the full re-dump
        // starts after the drain; by then no dump of ours runs in the kernel (a running dump refills
        // the queue as it is read, so the queue is not seen empty), and a late reply of the abandoned
        // one is applied as the notification it describes.
        if let abandoned = scheduler.finish() { _ = table.endDump(abandoned.kind, consistent: false) }
        scheduler.requestFullResync()
        isAwaitingDrain = true
        return []
    }

    /// The receive queue was seen empty (`EAGAIN`): the kernel has cleared its congestion state, so any
    /// later loss will raise a new `ENOBUFS`, and a re-dump started now is trustworthy.
    mutating func receiveQueueDrained() -> [Action] {
        guard isAwaitingDrain else { return [] }
        isAwaitingDrain = false
        return nextDump()
    }

    private mutating func handleDumpReply(_ message: NetlinkMessage) throws(NetlinkDumpFailure) {
        if message.header.isDumpInterrupted { scheduler.markInconsistent() }
        switch message.body {
        case .done(let code) where code < 0:
            try failDump(errorCode: code)
        case .done:
            finishDump()
        case .error(let code, _) where code < 0:
            try failDump(errorCode: code)
        case .error:
            break  // An acknowledgement; a dump ends with NLMSG_DONE.
        default:
            table.apply(message)
        }
    }

    private mutating func finishDump() {
        guard let dump = scheduler.finish() else { return }
        consecutiveDumpFailures = 0
        _ = table.endDump(dump.kind, consistent: dump.isConsistent)
        if dump.isConsistent {
            kindsAwaitingFirstDump.remove(dump.kind)
        } else {
            logger.debug("Netlink dump was interrupted by changes; dumping again", metadata: ["kind": "\(dump.kind)"])
            scheduler.retry(dump.kind)
        }
        if scheduler.isIdle, !isAwaitingDrain, overrunsInBurst > 0 {
            logger.notice("Netlink state reconciled after overruns", metadata: ["overruns": "\(overrunsInBurst)"])
            overrunsInBurst = 0
        }
    }

    private mutating func failDump(errorCode: Int32) throws(NetlinkDumpFailure) {
        guard let dump = scheduler.finish() else { return }
        _ = table.endDump(dump.kind, consistent: false)
        consecutiveDumpFailures += 1
        let failure = NetlinkDumpFailure(kind: dump.kind, errorCode: errorCode)
        guard consecutiveDumpFailures < Self.maximumConsecutiveDumpFailures else { throw failure }
        logger.warning("Netlink dump failed; retrying", metadata: ["error": "\(failure)"])
        scheduler.retry(dump.kind)
    }

    private mutating func reportIfChanged() -> [Action] {
        guard kindsAwaitingFirstDump.isEmpty else { return [] }
        let snapshot = table.snapshot()
        guard snapshot != lastReported else { return [] }
        lastReported = snapshot
        return [.report(snapshot)]
    }

    private mutating func nextDump() -> [Action] {
        guard !isAwaitingDrain, let dump = scheduler.startNext() else { return [] }
        table.beginDump(dump.kind)
        return [.requestDump(dump.kind, sequence: dump.sequence)]
    }
}

/// The kernel refused a dump repeatedly; without dumps the snapshot cannot be trusted.
struct NetlinkDumpFailure: Error, CustomStringConvertible, Sendable, Hashable {
    var kind: DumpKind
    /// A negative errno.
    var errorCode: Int32

    var description: String { "netlink \(kind) dump failed with errno \(-Int(errorCode))" }
}
