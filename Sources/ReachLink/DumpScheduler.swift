/// Serialises dump requests on one socket.
///
/// The kernel runs one dump per socket at a time (a second request gets `EBUSY`), and a dump must
/// share the socket with the notifications so that replies and events stay in kernel order. Requests
/// that arrive while a dump of the same kind runs are queued once, not per request, so a flap storm
/// costs one trailing re-dump rather than thousands.
struct DumpScheduler {
    struct Dump: Hashable {
        var kind: DumpKind
        var sequence: UInt32
        /// Cleared by `NLM_F_DUMP_INTR` or a failure: the dump may have skipped objects.
        var isConsistent = true
    }

    private(set) var current: Dump?
    private(set) var pending: [DumpKind] = []
    private var lastSequence: UInt32 = 0

    /// No dump running or waiting: every dump asked for so far has finished.
    var isIdle: Bool { current == nil && pending.isEmpty }

    /// Asks for a dump of `kind` after whatever runs now; a kind already waiting is not queued twice.
    mutating func request(_ kind: DumpKind) {
        if !pending.contains(kind) { pending.append(kind) }
    }

    /// Asks for `kind` again before anything else waiting: a dump that failed or was interrupted.
    mutating func retry(_ kind: DumpKind) {
        pending.removeAll { $0 == kind }
        pending.insert(kind, at: 0)
    }

    /// Asks for links, then addresses, then routes: the order that rebuilds the table soonest.
    mutating func requestFullResync() {
        pending = DumpKind.allCases
    }

    /// Starts the next waiting dump if none runs; the caller sends the request it returns.
    mutating func startNext() -> Dump? {
        guard current == nil, !pending.isEmpty else { return nil }
        lastSequence = lastSequence == UInt32.max ? 1 : lastSequence + 1
        let dump = Dump(kind: pending.removeFirst(), sequence: lastSequence)
        current = dump
        return dump
    }

    /// Whether a message belongs to the running dump (the kernel echoes our port id and sequence).
    func isReply(sequence: UInt32, portID: UInt32, ourPortID: UInt32) -> Bool {
        guard let current else { return false }
        return sequence == current.sequence && portID == ourPortID
    }

    mutating func markInconsistent() {
        current?.isConsistent = false
    }

    /// Ends the running dump and returns it.
    mutating func finish() -> Dump? {
        defer { current = nil }
        return current
    }
}
