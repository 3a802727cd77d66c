import Hummingbird
import ReachAPI
import ReachCore
import ReachSupport
import ServiceLifecycle
import Synchronization

/// `GET /v1/events`: verdicts as Server-Sent Events, so a program learns of a change the moment
/// reachd decides it instead of polling.
///
/// Each event is `id: <sequence>`, `event: verdict` and a ``StatusDocument`` on one `data:` line.
/// The current verdict comes first (or, when the client resumes with `Last-Event-ID`, every event
/// after that id that is still in the monitor's history), then every change. A `: heartbeat`
/// comment every `heartbeatInterval` keeps proxies from closing an idle stream and lets the client
/// notice a dead connection.
///
/// **A slow client skips ahead.** Events are taken from the subscription only as fast as the client
/// reads them, so the backlog stays in the monitor's per-subscriber buffer, which drops the oldest
/// events when full: a client that stops reading costs a bounded amount of memory and delays no one;
/// when it resumes it sees a gap in the ids and then the latest verdict. At most one heartbeat waits
/// in line. Graceful shutdown (and the monitor stopping) ends the stream cleanly.
struct EventStream: Sendable {
    let monitor: ConnectivityMonitor
    let heartbeatInterval: Duration
    /// Returns a departed client's memory to the kernel.
    let trimmer: HeapTrimmer

    private enum Item: Sendable {
        case event(ConnectivityEvent)
        case heartbeat
    }

    /// Set while a heartbeat waits to be written, so a stalled client does not collect them.
    private final class HeartbeatGate: Sendable {
        private let pending = Mutex(false)

        /// Marks a heartbeat pending; `false` if one already was.
        func open() -> Bool {
            pending.withLock { pending in
                defer { pending = true }
                return !pending
            }
        }

        func close() { pending.withLock { $0 = false } }
    }

    static let heartbeat = ByteBuffer(string: ServerSentEvent.heartbeat)

    /// The response for a new subscription; subscribes at once, so that what the client sees first
    /// is decided when the request arrives.
    func response(resumingAfter lastSequence: UInt64?) -> Response {
        let subscription = monitor.subscribe(resumingAfter: lastSequence)
        let monitor = self.monitor
        let heartbeatInterval = self.heartbeatInterval
        let trimmer = self.trimmer
        let body = ResponseBody { writer in
            defer { trimmer.clientLeft() }
            let (items, sink) = AsyncStream.makeStream(of: Item.self)
            // One permit per event written: the pump takes the next event only when the client has
            // the previous one, so undelivered events wait in the subscription's bounded buffer.
            let (permits, grant) = AsyncStream.makeStream(of: Void.self)
            let gate = HeartbeatGate()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    var permit = permits.makeAsyncIterator()
                    var events = subscription.cancelOnGracefulShutdown().makeAsyncIterator()
                    var next = await events.next()
                    while let event = next {
                        sink.yield(.event(event))
                        guard await permit.next() != nil else { break }
                        next = await events.next()
                    }
                    sink.finish()
                }
                group.addTask {
                    while (try? await Task.sleep(for: heartbeatInterval)) != nil {
                        if gate.open() { sink.yield(.heartbeat) }
                    }
                }
                defer {
                    grant.finish()
                    group.cancelAll()
                }
                // A fresh subscription always starts with the current verdict: no heartbeat goes
                // before it. A resumed one may have nothing new, and beats at once.
                var awaitingCurrent = lastSequence == nil
                for await item in items {
                    switch item {
                    case .event(let event):
                        awaitingCurrent = false
                        try await writer.write(Self.frame(event, likelyConnected: monitor.isLikelyConnected))
                        grant.yield()
                    case .heartbeat:
                        gate.close()
                        if !awaitingCurrent { try await writer.write(Self.heartbeat) }
                    }
                }
            }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [.contentType: StatusAPI.eventStreamMediaType, .cacheControl: "no-cache"],
            body: body
        )
    }

    /// One event: `id`, `event: verdict`, and the status document as a single `data` line.
    static func frame(_ event: ConnectivityEvent, likelyConnected: Bool) -> ByteBuffer {
        ByteBuffer(bytes: StatusDocument(event: event, likelyConnected: likelyConnected).eventFrame)
    }
}
