import ReachAPI
import ReachCore
import ReachSupport
import ReachTesting
import Testing

@Suite("The reason table: one set of words for every reason")
struct ReasonWordsTests {
    static let verdictReasons: [VerdictReason] = [
        .starting, .awaitingProbe, .healthy, .noLink, .noAddress, .noRoute, .captivePortal,
    ]
    static let failures: [FailureReason] = [
        .dnsFailure, .connectionRefused, .timeout, .tlsFailure, .httpStatus(503), .unexpectedBody, .networkUnreachable,
        .connectionReset,
        .cancelled, .protocolError, .notServing, .nxdomain, .servfail, .dnsRefused, .noResolver, .truncatedAnswer,
        .malformedAnswer, .unexpectedAnswer, .notPermitted, .destinationUnreachable, .timeExceeded,
    ]

    @Test func everyCodeTheCorePublishesHasItsOwnWords() {
        let codes = Self.verdictReasons.map(\.code) + Self.failures.map(\.code)
        #expect(Set(ReasonWords.all.map(\.code)) == Set(codes), "the table and the core name the same codes")
        for code in codes {
            let words = ReasonWords.of(code: code)
            #expect(words != .unknown(code), "\(code) has words of its own")
            #expect(!words.phrase.isEmpty && !words.clause.isEmpty && !words.sentence.isEmpty)
            #expect(!words.sentence.hasSuffix("."), "the notification adds the full stop after the target")
        }
    }

    @Test func codesReadBackAsTheReasonsTheyName() {
        for reason in Self.verdictReasons { #expect(VerdictReason(ownCode: reason.code) == reason) }
        for failure in Self.failures {
            #expect(FailureReason(code: failure.code, httpStatus: 503) == failure)
            #expect(VerdictReason(ownCode: failure.code) == nil, "a failure code is a target's, not the verdict's own")
        }
        #expect(FailureReason(code: "no_such_code") == nil)
    }

    @Test func onlyTheLinksReasonsAreTheLinks() {
        #expect(ReasonWords.all.filter(\.isLinkReason).map(\.code) == ["no_link", "no_address", "no_route"])
    }

    @Test func anHTTPStatusIsNamed() {
        #expect(FailureReason.httpStatus(503).words.phrase == "HTTP 503")
        #expect(FailureReason.httpStatus(503).words.clause == "unexpected HTTP status 503")
        #expect(VerdictReason.targetFailed(target: "api", reason: .httpStatus(503)).phrase == "api HTTP 503")
        #expect(VerdictReason.noLink.phrase == "no link")
    }

    @Test func aCodeFromANewerReachdIsSpokenAsItIs() {
        let words = ReasonWords.of(code: "upstream_down")
        #expect(words.phrase == "upstream down")
        #expect(words.sentence == "The server cannot be reached (upstream down)")
        #expect(!words.isLinkReason)
    }

    @Test func theSummaryIsOneLineAPersonReadsAtAGlance() {
        var verdict = Verdict(
            state: .connected,
            reason: .healthy,
            since: WallTime(sinceEpoch: .zero),
            usableInterfaces: ["eth0"]
        )
        verdict.targets = [
            TargetStatus(name: "server", kind: "http", health: .healthy, lastResult: .ok("server", ms: 12))
        ]
        #expect(verdict.summary == "connected via eth0: server 12 ms")
        verdict.state = .disconnected
        verdict.reason = .targetFailed(target: "server", reason: .connectionRefused)
        #expect(verdict.summary == "waiting for connectivity: server refused")
        verdict.reason = .targetFailed(target: "api", reason: .httpStatus(503))
        #expect(verdict.summary == "waiting for connectivity: api HTTP 503")
        verdict.reason = .noLink
        #expect(verdict.summary == "waiting for connectivity: no link")
    }
}
