import Foundation
import Logging
import Prometheus
import ReachAPI
import ReachConfig
import ReachCore
import ReachMetrics
import ReachSupport
import ReachTestRigs
import ReachTesting
import Synchronization
import Testing

@testable import ReachHooks

@Suite("Webhooks: delivery, signature, retries, giving up", .serialized)
struct WebhookTests {
    let logs = CapturedLogs()
    let observer = RecordingObserver()
    /// How late a timer may fire on a loaded 2-core machine running the whole suite at once.
    static let lateness = Duration.milliseconds(700)
    let directory: TemporaryDirectory
    var secretFile: String { "\(directory)/secret" }

    init() throws {
        directory = try TemporaryDirectory("webhook-secret")
        try "correct horse battery staple\n".write(toFile: secretFile, atomically: true, encoding: .utf8)
    }

    func withClient(_ body: (WebhookClient) async throws -> Void) async throws {
        try await body(WebhookClient())
    }

    /// Expects a loss's delivery to `settings` to be given up with an error `saying` accepts.
    func expectGivingUp(_ settings: WebhookSettings, saying: (String) -> Bool) async {
        await #expect {
            try await WebhookSender(settings: settings, client: WebhookClient(), observer: nil, logger: logs.logger)
                .deliver(transition(.lost), likelyConnected: false)
        } throws: { error in
            saying("\(error)")
        }
    }

    @Test func aReceiverThatFailsTwiceGetsTheSameSignedEventThreeTimesAndAcceptsIt() async throws {
        let receiver = try await WebhookReceiver(["--fail-first", "2", "--secret-file", secretFile])
        defer { receiver.stop() }
        let settings = WebhookSettings(
            name: "ops",
            url: receiver.url,
            secret: Secret("correct horse battery staple"),
            timeout: .seconds(5),
            giveUpAfter: .seconds(30),
            firstRetryDelay: .milliseconds(200)
        )
        let event = transition(.restored, sequence: 1_800_000_000_000_007)
        try await withClient { client in
            try await WebhookSender(settings: settings, client: client, observer: observer, logger: logs.logger)
                .deliver(event, likelyConnected: true)
        }
        let requests = receiver.requests
        #expect(requests.map { $0["status"] as? Int } == [503, 503, 204])
        #expect(
            requests.allSatisfy { $0["signature_ok"] as? Bool == true },
            "the receiver verified every signature with the shared secret"
        )
        #expect(
            requests.allSatisfy {
                $0["event"] as? String == "restored" && $0["content_type"] as? String == "application/json"
            }
        )
        let body = try #require(requests.last?["body"] as? [String: Any])
        #expect(body["state"] as? String == "connected")
        #expect(body["sequence"] as? UInt64 == event.sequence)
        #expect(body["since"] as? String == "2027-01-15T08:00:00.000Z")
        #expect(body["usable_interfaces"] as? [String] == ["eth0"])
        #expect(observer.webhooks.map(\.outcome) == [.delivered])
        #expect(logs.all.filter { $0.message.contains("retrying in") }.count == 2, "each failed attempt is logged")
        #expect(
            logs.all.contains { $0.message.contains("delivered #\(event.sequence)") && $0.metadata["attempts"] == "3" }
        )
    }

    @Test func theBodyIsTheEventStreamsDataByteForByte() async throws {
        let event = transition(.lost, sequence: 9)
        let data = APIJSON.encode(
            StatusDocument(
                event: ConnectivityEvent(sequence: event.sequence, verdict: event.verdict),
                likelyConnected: false
            )
        )
        let receiver = try await WebhookReceiver([])
        defer { receiver.stop() }
        try await withClient { client in
            try await WebhookSender(
                settings: WebhookSettings(name: "x", url: receiver.url),
                client: client,
                observer: nil,
                logger: logs.logger
            )
            .deliver(event, likelyConnected: false)
        }
        let received = try #require(receiver.requests.first?["raw"] as? String)
        #expect(received == String(decoding: data, as: UTF8.self))
        #expect(receiver.requests.first?["signature_ok"] is NSNull, "no secret, no signature")
    }

    @Test func aReceiverThatNeverAcceptsIsGivenUpWithinTheBoundLoggedAndCounted() async throws {
        let receiver = try await WebhookReceiver(["--never-accept"])
        defer { receiver.stop() }
        let giveUpAfter = Duration.seconds(2)
        let settings = WebhookSettings(
            name: "flaky",
            url: receiver.url,
            timeout: .seconds(1),
            giveUpAfter: giveUpAfter,
            firstRetryDelay: .milliseconds(100),
            maximumRetryDelay: .milliseconds(400)
        )
        let metrics = ReachMetrics(targets: [])
        metrics.reactionsConfigured(hooks: [], webhooks: ["flaky"])
        let started = ContinuousClock.now
        try await withClient { client in
            await #expect(throws: WebhookSender.GaveUp.self) {
                try await WebhookSender(settings: settings, client: client, observer: metrics, logger: logs.logger)
                    .deliver(transition(.lost), likelyConnected: false)
            }
        }
        let elapsed = ContinuousClock.now - started
        #expect(elapsed <= giveUpAfter + settings.timeout + Self.lateness, "took \(elapsed)")
        #expect(receiver.requests.count >= 2, "retried: \(receiver.requests.count) attempts")
        let gaveUp = try #require(logs.all.first { $0.metadata["event"] == "\(ReachLogEvent.webhookGaveUp.rawValue)" })
        #expect(gaveUp.level == .error)
        // Every attempt is counted, and every one the receiver got. The last attempt has what is left of
        // the bound, down to 1 ms: cut that short ("no answer within ..."), its request may never have
        // reached the receiver.
        let attempts = Int("\(gaveUp.metadata["attempts"] ?? "")") ?? -1
        let lastCutShort = gaveUp.message.contains("no answer within") || gaveUp.message.contains("cut short")
        #expect(
            receiver.requests.count == attempts || (lastCutShort && receiver.requests.count == attempts - 1),
            "\(attempts) attempts logged, \(receiver.requests.count) received: \(gaveUp.message)"
        )
        let exposition = String(decoding: metrics.registry.emitToBuffer(), as: UTF8.self)
        #expect(exposition.contains(#"reachd_webhook_deliveries_total{webhook="flaky",result="gave_up"} 1"#))
        #expect(
            exposition.contains(#"reachd_webhook_deliveries_total{webhook="flaky",result="delivered"} 0"#),
            "series exist from the start"
        )
    }

    /// The last attempt gets only what is left of the budget. When that runs out first, the
    /// receiver said nothing: the reason given up with is the one it gave before.
    @Test func anAttemptTheBudgetCutsShortDoesNotHideTheReceiversReason() async throws {
        let receiver = try await WebhookReceiver(["--fail-first", "1", "--then-silent"])
        defer { receiver.stop() }
        let settings = WebhookSettings(
            name: "gone-quiet",
            url: receiver.url,
            timeout: .seconds(5),
            giveUpAfter: .seconds(3),
            firstRetryDelay: .milliseconds(50),
            maximumRetryDelay: .milliseconds(100)
        )
        await expectGivingUp(settings) { $0.hasSuffix("HTTP 503") }
        let gaveUp = try #require(logs.all.first { $0.metadata["event"] == "\(ReachLogEvent.webhookGaveUp.rawValue)" })
        #expect(gaveUp.metadata["error"] == "HTTP 503")
        #expect(gaveUp.message.contains("cut short"), "the log says the last attempt was cut short: \(gaveUp.message)")
    }

    @Test func retryDelaysDoubleFromTheFirstCeilingUpToTheMaximum() async throws {
        let receiver = try await WebhookReceiver(["--never-accept"])
        defer { receiver.stop() }
        let (first, maximum) = (Duration.milliseconds(100), Duration.milliseconds(400))
        var sender = WebhookSender(
            settings: WebhookSettings(
                name: "paced",
                url: receiver.url,
                timeout: .seconds(1),
                giveUpAfter: .seconds(3),
                firstRetryDelay: first,
                maximumRetryDelay: maximum
            ),
            client: WebhookClient(),
            observer: nil,
            logger: logs.logger
        )
        let ceilings = Mutex<[Duration]>([])
        sender.jitter = { ceiling in
            ceilings.withLock { $0.append(ceiling) }
            return ceiling  // always the ceiling, so the receiver sees the schedule itself
        }
        await #expect(throws: WebhookSender.GaveUp.self) {
            try await sender.deliver(transition(.lost), likelyConnected: false)
        }
        let asked = ceilings.withLock { $0 }
        #expect(asked.count >= 4, "\(asked)")
        #expect(asked == asked.indices.map { min(first * (1 << $0), maximum) }, "doubling from the first delay, capped")
        // What the receiver saw: each retry came no earlier than its delay (lateness is the machine's load).
        let times = receiver.requests.compactMap { $0["time"] as? Double }
        let gaps = zip(times.dropFirst(), times).map { Duration.milliseconds(Int(($0 - $1) * 1000)) }
        for (gap, ceiling) in zip(gaps, asked) {
            #expect(gap >= ceiling - .milliseconds(5), "gap \(gap), delay \(ceiling)")
        }
    }

    @Test func fullJitterPicksAnywhereBetweenZeroAndTheCeiling() {
        let sender = WebhookSender(
            settings: WebhookSettings(name: "x", url: "http://127.0.0.1:9/"),
            client: WebhookClient(),
            observer: nil,
            logger: logs.logger
        )
        let ceiling = Duration.seconds(8)
        let picks = (0..<1000).map { _ in sender.jitter(ceiling) }
        #expect(picks.allSatisfy { $0 >= .zero && $0 <= ceiling })
        #expect(
            picks.contains { $0 < ceiling / 4 } && picks.contains { $0 > ceiling * 3 / 4 },
            "spread over the whole range"
        )
    }

    @Test func aReceiverThatNeverAnswersCostsOneTimeoutPerAttempt() async throws {
        // A listening socket that never accepts: connect succeeds (backlog), no answer ever comes.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        listen(fd, 16)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        let settings = WebhookSettings(
            name: "silent",
            url: "http://127.0.0.1:\(port)/",
            timeout: .milliseconds(300),
            giveUpAfter: .seconds(2),
            firstRetryDelay: .milliseconds(50),
            maximumRetryDelay: .milliseconds(100)
        )
        let started = ContinuousClock.now
        try await withClient { client in
            await #expect(throws: WebhookSender.GaveUp.self) {
                try await WebhookSender(settings: settings, client: client, observer: observer, logger: logs.logger)
                    .deliver(transition(.lost), likelyConnected: false)
            }
        }
        let elapsed = ContinuousClock.now - started
        #expect(elapsed < settings.giveUpAfter + settings.timeout + Self.lateness, "took \(elapsed)")
        let gaveUp = try #require(logs.all.first { $0.metadata["event"] == "\(ReachLogEvent.webhookGaveUp.rawValue)" })
        let attempts = Int("\(gaveUp.metadata["attempts"] ?? "0")") ?? 0
        #expect(attempts >= 2, "each attempt ended at its own deadline, leaving time to retry: \(attempts) attempts")
        #expect(observer.webhooks.map(\.outcome) == [.gaveUp])
    }

    /// An https receiver gets TLS with its certificate checked against the system's trust store:
    /// one a private CA issued is refused, and the webhook is given up saying why.
    @Test func anHTTPSReceiverWhoseCertificateIsNotTrustedIsRefused() async throws {
        let directory = try TemporaryDirectory("webhook-tls")
        let ca = try await PrivateCA.make(in: directory.path)
        let server = try await LoopbackHTTPSServer(certificate: try await ca.issue(name: "hooks.test"))
        let settings = WebhookSettings(
            name: "untrusted",
            url: "https://127.0.0.1:\(server.port)/reachd",
            timeout: .seconds(2),
            // Room for a handshake on a loaded machine: with 300 ms, every attempt ran out of time
            // before the stand-in's certificate arrived, and the error said so instead.
            giveUpAfter: .seconds(3),
            firstRetryDelay: .milliseconds(50),
            maximumRetryDelay: .milliseconds(100)
        )
        await expectGivingUp(settings) { $0.lowercased().contains("certificate") }
        await server.stop()
    }
}
