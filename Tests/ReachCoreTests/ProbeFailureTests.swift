import ReachCore
import Testing

@Suite("Probe failures")
struct ProbeFailureTests {
    @Test func aDetailQuotingAHugeAnswerIsCut() {
        var failure = ProbeFailure(
            .unexpectedBody,
            phase: .body,
            detail: "/status is " + String(repeating: "x", count: 1 << 20)
        )
        #expect(failure.detail?.count == ProbeFailure.detailLimit)
        #expect(failure.detail?.hasSuffix("…") == true)
        failure.detail = String(repeating: "y", count: 10_000)
        #expect(failure.detail?.count == ProbeFailure.detailLimit)
        #expect(ProbeFailure(.unexpectedBody, detail: "short").detail == "short")
    }

    @Test func aDetailCannotCarryTerminalEscapes() {
        let failure = ProbeFailure(.unexpectedBody, detail: "/status is \u{1B}[2J\u{1B}]0;owned\u{07}\nnext\tline é")
        #expect(failure.detail == "/status is \u{FFFD}[2J\u{FFFD}]0;owned\u{FFFD}\u{FFFD}next\u{FFFD}line é")
    }
}
