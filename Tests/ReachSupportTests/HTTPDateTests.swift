import ReachSupport
import Testing

/// HTTP's date: the status API's `Date` header, and the `Retry-After` date ReachKit reads.
@Suite("HTTP dates")
struct HTTPDateTests {
    @Test func formatsIMFFixdate() {
        #expect(
            HTTPDate.string(secondsSinceEpoch: 784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT",
            "RFC 9110's own example"
        )
        #expect(HTTPDate.string(secondsSinceEpoch: 0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.string(secondsSinceEpoch: 1_795_440_000) == "Mon, 23 Nov 2026 13:20:00 GMT")
        #expect(HTTPDate.string(secondsSinceEpoch: -1) == "Wed, 31 Dec 1969 23:59:59 GMT")
    }

    @Test func readsWhatItWritesAndNothingElse() {
        for seconds: Int64 in [0, 784_111_777, 1_795_440_000, 951_782_400, 4_107_542_399] {
            #expect(
                HTTPDate.wallTime(from: HTTPDate.string(secondsSinceEpoch: seconds))?.sinceEpoch == .seconds(seconds)
            )
        }
        for text in [
            "", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Nov 1994 08:49:37 UTC", "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Foo 1994 08:49:37 GMT",
        ] {
            #expect(HTTPDate.wallTime(from: text) == nil, "\(text)")
        }
    }

    @Test func civilDatesRoundTripAndKnowTheirWeekday() {
        #expect(CivilDate(daysSinceEpoch: 0) == CivilDate(year: 1970, month: 1, day: 1))
        #expect(CivilDate(year: 2000, month: 2, day: 29).daysSinceEpoch == 11_016)
        #expect(CivilDate(daysSinceEpoch: -1) == CivilDate(year: 1969, month: 12, day: 31))
        #expect(CivilDate(year: 1994, month: 11, day: 6).weekday == 0, "a Sunday")
        #expect(CivilDate(daysSinceEpoch: -1).weekday == 3, "a Wednesday")
        for days in stride(from: Int64(-800_000), through: 3_000_000, by: 997) {
            #expect(CivilDate(daysSinceEpoch: days).daysSinceEpoch == days)
        }
    }
}
