import Testing

@testable import ReachSupport

@Suite("Durations as people write them")
struct DurationTextTests {
    @Test(arguments: [
        ("1s", Duration.seconds(1)), ("250ms", .milliseconds(250)), ("1m30s", .seconds(90)),
        ("1.5s", .milliseconds(1500)),
        ("100us", .microseconds(100)), ("100µs", .microseconds(100)), ("2h", .seconds(7200)),
        ("10ns", .nanoseconds(10)), ("0s", .zero),
    ])
    func parses(text: String, duration: Duration) {
        #expect(DurationText.parse(text) == duration)
    }

    @Test(arguments: ["", "1", "s", "1x", "-1s", "1 s", "1s2", "..s", "1e3s", "99999999999h"])
    func rejects(text: String) {
        #expect(DurationText.parse(text) == nil)
    }

    @Test func formatsInTheLargestExactUnit() {
        #expect(DurationText.format(.seconds(2)) == "2s")
        #expect(DurationText.format(.milliseconds(250)) == "250ms")
        #expect(DurationText.format(.seconds(3600)) == "1h")
        #expect(DurationText.format(.zero) == "0ns")
    }
}
