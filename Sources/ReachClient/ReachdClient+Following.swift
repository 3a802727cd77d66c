import ReachAPI
import ReachPOSIX
import ReachSupport

extension ReachdClient {
    /// Follows reachd's event stream for as long as `onUpdate` wants: the one reader of
    /// `/v1/events`, for `reachctl watch` and `wait-online`, the desktop agent and ReachKit's
    /// service alike, so that reconnecting, resuming and reading the events are written once.
    ///
    /// - Each verdict event's status document is handed over, read once; other events, and
    ///   reachd's heartbeats, only show that the stream is alive.
    /// - Each break (no connection, a refusal, silence past `silenceLimit`, a closed stream, an
    ///   event that is not a status document) is handed over with the wait before the next attempt:
    ///   `backoff`'s, from its first step again once an event has arrived.
    /// - Each attempt after the first resumes after the last event id seen (`Last-Event-ID`):
    ///   reachd replays what it still remembers, or starts over with a `reset` verdict.
    ///
    /// - Parameters:
    ///   - clock: Times the waits between attempts (a test clock in tests).
    ///   - onUpdate: Each verdict and each break, in order; returns whether to go on following.
    /// - Throws: What `onUpdate` throws, or `CancellationError`.
    package func follow(
        backoff: ReconnectBackoff,
        silenceLimit: Duration = .seconds(45),
        clock: MonitorClock = .system(),
        _ onUpdate: (ReachdUpdate) async throws -> Bool
    ) async throws {
        var backoff = backoff
        var lastEventID: String?
        while true {
            let broken: ReachdClientError
            do {
                try await events(after: lastEventID, silenceLimit: silenceLimit) { event in
                    if let id = event.id { lastEventID = id }
                    backoff.reset()
                    guard event.isVerdict else { return true }
                    let document: StatusDocument
                    do {
                        document = try StatusDocument(event: event)
                    } catch {
                        throw ReachdClientError.notReachd(
                            endpoint,
                            StatusAPI.events.path,
                            "an event that is not a status document (\(error))"
                        )
                    }
                    do {
                        return try await onUpdate(.verdict(document))
                    } catch {
                        throw FromBody(error: error)
                    }
                }
                return
            } catch let error as FromBody {
                throw error.error
            } catch let error as ReachdClientError {
                broken = error
            }
            // Cancelled while connecting reads as unreachable: that is no break to tell of.
            try Task.checkCancellation()
            let wait = backoff.next()
            guard try await onUpdate(.disconnected(broken, retryingIn: wait)) else { return }
            try await clock.sleep(for: wait)
        }
    }

    /// One connection to `/v1/events`: hands each event to `onEvent` until it returns `false`, then
    /// returns; resumes after `lastEventID` when given.
    ///
    /// - Throws: ``ReachdClientError`` when the stream cannot be had or ends, or what `onEvent` throws.
    private func events(
        after lastEventID: String?,
        silenceLimit: Duration,
        _ onEvent: (ServerSentEvent) async throws -> Bool
    ) async throws {
        var request = ReachdRequest(
            endpoint: endpoint,
            path: StatusAPI.events.path,
            headers: [("Accept", StatusAPI.eventStreamMediaType)],
            connectTimeout: connectTimeout,
            silenceLimit: silenceLimit
        )
        if let lastEventID { request.headers.append((StatusAPI.lastEventIDHeader, lastEventID)) }
        var parser = EventStreamParser()
        do {
            try await request.run { chunk in
                let events: [ServerSentEvent]
                do {
                    events = try parser.feed(chunk)
                } catch {
                    throw ReachdClientError.broke(endpoint, StatusAPI.events.path, "\(error)")
                }
                for event in events {
                    guard try await onEvent(event) else { throw Finished() }
                }
            }
        } catch is Finished {
            return
        }
        throw ReachdClientError.closedStream(endpoint)
    }

    private struct Finished: Error {}
}
