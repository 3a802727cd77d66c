import Testing

@testable import ReachServer

/// The `Date` header reachd's status API sends, formatted on demand instead of by a timer.
@Suite("Date header")
struct HTTPDateTests {
    @Test func formatsIMFFixdate() {
        #expect(
            HTTPDate.format(secondsSinceEpoch: 784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT",
            "RFC 9110's own example"
        )
        #expect(HTTPDate.format(secondsSinceEpoch: 0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.format(secondsSinceEpoch: 1_795_440_000) == "Mon, 23 Nov 2026 13:20:00 GMT")
    }

    @Test func nowIsThisSecondInThatFormat() {
        #expect(HTTPDate.now.hasSuffix(" GMT"))
        #expect(HTTPDate.now.count == 29)
    }
}
