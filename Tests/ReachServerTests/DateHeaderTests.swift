import Testing

@testable import ReachServer

/// The `Date` header reachd's status API sends, formatted on demand instead of by a timer.
@Suite("Date header")
struct DateHeaderTests {
    @Test func nowIsThisSecondInThatFormat() {
        #expect(DateHeader.now.hasSuffix(" GMT"))
        #expect(DateHeader.now.count == 29)
    }
}
