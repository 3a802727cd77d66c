import Dispatch
import Glibc
import Logging
import ReachPOSIX
import Synchronization

/// Hands log lines to journald from a thread of its own, so that logging never blocks the daemon
/// and no line is lost without a word.
///
/// `sd_journal_sendv` writes to a blocking datagram socket: while journald is stopped (SIGSTOP, a
/// hung journald) and its queue is full, the send waits. Here a caller only appends to a bounded
/// queue; one writer thread sends. When the queue is full, or when journald refuses a line
/// (negative errno: it is gone), the line goes to the fallback handler (logfmt on standard error)
/// instead, with one notice when that detour begins and one in the journal when it ends.
package final class JournalWriter: Sendable {
    /// How many lines may wait for journald before new ones go to standard error.
    package static let defaultCapacity = 1024

    private struct State {
        var queue: [LogEvent] = []
        var next = 0
        var inFlight: LogEvent?
        /// Lines are going to the fallback: journald refused one or the queue overflowed.
        var detoured = false
        var detouredLines = 0
        var stopped = false

        var waiting: Int { queue.count - next }

        mutating func pop() -> LogEvent? {
            guard next < queue.count else { return nil }
            let event = queue[next]
            next += 1
            if next == queue.count {
                queue.removeAll(keepingCapacity: true)
                next = 0
            }
            return event
        }
    }

    private let state = Mutex(State())
    private let wakeup = DispatchSemaphore(value: 0)
    private let fallback: any LogHandler
    private let identifier: String
    private let capacity: Int

    /// - Parameters:
    ///   - identifier: `SYSLOG_IDENTIFIER` of every line (`journalctl -t`).
    ///   - fallback: Writes the lines journald does not take; its own level and metadata are not consulted.
    ///   - capacity: Lines that may wait for journald.
    package init(
        identifier: String = "reachd",
        fallback: any LogHandler,
        capacity: Int = JournalWriter.defaultCapacity
    ) throws(SystemCallError) {
        self.identifier = identifier
        self.fallback = fallback
        self.capacity = max(1, capacity)
        try DedicatedThread.start(named: "reachd-journal") { [self] in self.run() }
    }

    /// Queues a line whose metadata is complete; never blocks on journald.
    package func submit(_ event: LogEvent) {
        let queued = state.withLock { state -> Bool in
            guard !state.stopped, state.waiting < capacity else { return false }
            state.queue.append(event)
            return true
        }
        if queued {
            wakeup.signal()
            return
        }
        let stopped = state.withLock { $0.stopped }
        if !stopped { detour("journald is not taking lines (stopped or overloaded): \(capacity) are waiting") }
        fallback.log(event: event)
    }

    /// Waits up to `timeout` for journald to take the waiting lines, then stops the writer; what
    /// it did not take is written to the fallback, so that a daemon that exits loses nothing.
    /// Lines submitted afterwards go to the fallback directly.
    package func finish(within timeout: Duration) {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while state.withLock({ $0.waiting > 0 || $0.inFlight != nil }), ContinuousClock.now < deadline {
            usleep(1_000)
        }
        let leftovers = state.withLock { state -> [LogEvent] in
            state.stopped = true
            var leftovers = state.inFlight.map { [$0] } ?? []
            while let event = state.pop() { leftovers.append(event) }
            return leftovers
        }
        wakeup.signal()
        guard !leftovers.isEmpty else { return }
        fallback.log(
            event: notice(
                "journald did not take the last \(leftovers.count) lines within \(timeout): they follow on standard error"
            )
        )
        for event in leftovers { fallback.log(event: event) }
    }

    private func run() {
        var names = FieldNameCache()
        while true {
            wakeup.wait()
            let next = state.withLock { state -> LogEvent?? in
                if let event = state.pop() {
                    state.inFlight = event
                    return .some(event)
                }
                return state.stopped ? .none : .some(nil)
            }
            guard let next else { return }
            guard let event = next else { continue }
            let result = JournalEntry(event, identifier: identifier, names: &names).send()
            if result < 0 {
                state.withLock { $0.inFlight = nil }
                detour(
                    "journald does not answer (\(SystemCallError.reason(-result))): logging to standard error until it does"
                )
                fallback.log(event: event)
            } else if let missed = rejoined() {
                let back = notice("journald answers again; \(missed) lines went to standard error meanwhile")
                if JournalEntry(back, identifier: identifier, names: &names).send() < 0 { fallback.log(event: back) }
            }
        }
    }

    /// Counts a line going to the fallback; the first of a detour comes with a notice saying why.
    private func detour(_ why: String) {
        let first = state.withLock { state -> Bool in
            defer {
                state.detoured = true
                state.detouredLines += 1
            }
            return !state.detoured
        }
        if first { fallback.log(event: notice(why)) }
    }

    /// After a line reached journald: ends a detour once the queue has room again, returning how
    /// many lines it sent to the fallback.
    private func rejoined() -> Int? {
        state.withLock { state -> Int? in
            state.inFlight = nil
            guard state.detoured, state.waiting < capacity / 2 + 1 else { return nil }
            defer {
                state.detoured = false
                state.detouredLines = 0
            }
            return state.detouredLines
        }
    }

    private func notice(_ message: String, function: String = #function, line: UInt = #line) -> LogEvent {
        LogEvent(
            level: .notice,
            message: "\(message)",
            metadata: nil,
            source: "ReachSystemd",
            file: #fileID,
            function: function,
            line: line
        )
    }
}
