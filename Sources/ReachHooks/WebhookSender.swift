import Logging
import ReachAPI
import ReachConfig
import ReachCore
import ReachSupport

/// Delivers transitions to one webhook: a `POST` of the event's JSON (the document `/v1/events`
/// sends as `data:`), signed when a secret is set, retried until a 2xx answer or the retry budget
/// runs out.
///
/// Retries wait a random time between zero and a ceiling that starts at `firstRetryDelay` and
/// doubles up to `maximumRetryDelay` ("full jitter"), so that many reachd instances whose network
/// came back at once do not hammer the receiver in step. No attempt starts after `giveUpAfter`
/// from the first; the event is then given up, logged and counted.
struct WebhookSender: Sendable {
    let settings: WebhookSettings
    let client: WebhookClient
    let observer: (any ReactionObserver)?
    let logger: Logger
    /// Picks a retry delay in `0...ceiling`; random, except in tests that need it fixed.
    var jitter: @Sendable (Duration) -> Duration = { ceiling in
        .nanoseconds(Int64.random(in: 0...max(0, Int64(ceiling / .nanoseconds(1)))))
    }

    /// The webhook was not delivered within its budget.
    struct GaveUp: Error, CustomStringConvertible {
        let attempts: Int
        let lastError: String
        var description: String { "gave up after \(attempts) attempt(s): \(lastError)" }
    }

    /// One attempt's failure, in words for the log.
    private struct AttemptFailed: Error, CustomStringConvertible {
        let description: String
    }

    /// Delivers `transition`; throws ``GaveUp`` when the budget ran out, `CancellationError` when
    /// reachd is stopping.
    func deliver(_ transition: ConnectivityTransition, likelyConnected: Bool) async throws {
        let document = StatusDocument(
            event: ConnectivityEvent(sequence: transition.sequence, verdict: transition.verdict),
            likelyConnected: likelyConnected
        )
        let body = Array(APIJSON.encode(document))
        let headers = headers(for: body, transition: transition)
        let clock = ContinuousClock()
        let giveUpAt = clock.now.advanced(by: settings.giveUpAfter)
        var metadata: Logger.Metadata = [
            "webhook": "\(settings.name)", "sequence": "\(transition.sequence)",
            "direction": "\(transition.direction.rawValue)",
        ]
        var ceiling = settings.firstRetryDelay
        var attempts = 0
        var lastError = ""
        var lastCutShort = false
        while true {
            attempts += 1
            let timeout = min(settings.timeout, max(clock.now.duration(to: giveUpAt), .milliseconds(1)))
            do {
                let status = try await attempt(body, headers: headers, timeout: timeout)
                metadata["attempts"] = "\(attempts)"
                metadata["http_status"] = "\(status)"
                logger.info(
                    "webhook \(settings.name) delivered #\(transition.sequence) (HTTP \(status), attempt \(attempts))",
                    metadata: metadata
                )
                observer?.webhookFinished(settings.name, outcome: .delivered)
                return
            } catch is CancellationError {
                try stopped(transition, metadata)
            } catch is DeadlineExceeded where timeout < settings.timeout && !lastError.isEmpty {
                // The budget, not the receiver, cut this attempt short: the earlier attempt's reason stands.
                lastCutShort = true
            } catch {
                lastError = "\(error)"
                lastCutShort = false
            }
            if Task.isCancelled { try stopped(transition, metadata) }
            let delay = jitter(ceiling)
            ceiling = min(ceiling * 2, settings.maximumRetryDelay)
            guard clock.now.advanced(by: delay) < giveUpAt else { break }
            logger.info(
                "webhook \(settings.name) attempt \(attempts) for #\(transition.sequence) failed: \(lastError); retrying in \(Int(delay / .milliseconds(1))) ms",
                metadata: metadata
            )
            do {
                try await Task.sleep(for: delay)
            } catch {
                try stopped(transition, metadata)
            }
        }
        metadata["attempts"] = "\(attempts)"
        metadata["error"] = "\(lastError)"
        logger.error(
            "webhook \(settings.name) gave up on #\(transition.sequence) after \(attempts) attempt(s) within \(settings.giveUpAfter): \(lastError)\(lastCutShort ? " (the last attempt was cut short by the budget)" : "")",
            metadata: metadata.merging(ReachLogEvent.webhookGaveUp.metadata) { $1 }
        )
        observer?.webhookFinished(settings.name, outcome: .gaveUp)
        throw GaveUp(attempts: attempts, lastError: lastError)
    }

    private func stopped(_ transition: ConnectivityTransition, _ metadata: Logger.Metadata) throws -> Never {
        logger.warning(
            "webhook \(settings.name): delivery of #\(transition.sequence) abandoned, reachd is stopping",
            metadata: metadata
        )
        observer?.webhookFinished(settings.name, outcome: .cancelled)
        throw CancellationError()
    }

    private func headers(for body: [UInt8], transition: ConnectivityTransition) -> [(String, String)] {
        var headers = [
            ("Content-Type", StatusAPI.jsonMediaType),
            ("User-Agent", "reachd/\(ReachVersion.current)"),
            ("X-Reachd-Event", transition.direction.rawValue),
            ("X-Reachd-Sequence", "\(transition.sequence)"),
        ]
        if let secret = settings.secret {
            headers.append((WebhookSignature.header, WebhookSignature.value(for: body, secret: secret)))
        }
        return headers
    }

    /// One POST, bounded as a whole (connect to the last byte of the answer) by `timeout`; the
    /// answer's status, or an error when it is not 2xx.
    private func attempt(_ body: [UInt8], headers: [(String, String)], timeout: Duration) async throws -> Int {
        guard let url = HTTPURL(settings.url) else {
            throw AttemptFailed(description: "\(settings.url) is not an http:// or https:// URL")
        }
        let client = self.client
        // At the deadline the POST is cancelled and `DeadlineExceeded` says "no answer within ...".
        let status = try await withDeadline(timeout) {
            try await client.post(url, headers: headers, body: body, connectTimeout: timeout)
        }
        guard (200..<300).contains(status) else { throw AttemptFailed(description: "HTTP \(status)") }
        return status
    }
}
