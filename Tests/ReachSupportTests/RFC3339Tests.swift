import ReachSupport
import Testing

@Suite("RFC 3339: the one timestamp format")
struct RFC3339Tests {
    @Test(arguments: [
        (Duration.zero, "1970-01-01T00:00:00.000Z"),
        (.milliseconds(1), "1970-01-01T00:00:00.001Z"),
        (.nanoseconds(999_999), "1970-01-01T00:00:00.000Z"),
        (.seconds(951_782_400), "2000-02-29T00:00:00.000Z"),
        (.seconds(1_709_164_799) + .milliseconds(999), "2024-02-28T23:59:59.999Z"),
        (.seconds(4_102_444_800), "2100-01-01T00:00:00.000Z"),
        (.milliseconds(-1), "1969-12-31T23:59:59.999Z"),
    ])
    func timesAreWrittenInUTCWithMilliseconds(sinceEpoch: Duration, expected: String) {
        #expect(RFC3339.string(from: WallTime(sinceEpoch: sinceEpoch)) == expected)
    }

    @Test func timesAreReadAsReachdWritesThem() {
        #expect(
            RFC3339.wallTime(from: "2026-11-23T14:32:36.123Z")
                == WallTime(sinceEpoch: .seconds(1_795_444_356) + .milliseconds(123))
        )
        #expect(RFC3339.wallTime(from: "1970-01-01T00:00:00Z") == WallTime(sinceEpoch: .zero))
        #expect(
            RFC3339.wallTime(from: "2000-03-01T00:00:01.5Z")
                == WallTime(sinceEpoch: .seconds(951_868_801) + .milliseconds(500))
        )
    }

    @Test func offsetsAndLongFractionsAreRead() {
        #expect(
            RFC3339.wallTime(from: "2026-11-23T16:32:36.123+02:00")
                == RFC3339.wallTime(from: "2026-11-23T14:32:36.123Z")
        )
        #expect(RFC3339.wallTime(from: "2026-11-23T09:32:36-05:00") == RFC3339.wallTime(from: "2026-11-23T14:32:36Z"))
        #expect(
            RFC3339.wallTime(from: "1970-01-01T00:00:00.123456789123Z")
                == WallTime(sinceEpoch: .nanoseconds(123_456_789))
        )
    }

    @Test func anythingElseIsNotATime() {
        for text in [
            "not a time", "", "2026-11-23", "2026-11-23T14:32:36", "2026-13-01T00:00:00Z", "2026-11-23T14:32:36.Z",
            "2026-11-23T14:32:36Zjunk",
        ] {
            #expect(RFC3339.wallTime(from: text) == nil, "\(text)")
        }
    }

    @Test(arguments: [Int64(0), 1_795_444_356_123, 951_868_801_500, 4_102_444_799_999])
    func whatIsWrittenReadsBackTheSame(milliseconds: Int64) {
        let time = WallTime(sinceEpoch: .milliseconds(milliseconds))
        #expect(RFC3339.wallTime(from: RFC3339.string(from: time)) == time)
    }
}
