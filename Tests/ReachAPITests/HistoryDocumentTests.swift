import Foundation
import ReachAPI
import ReachCore
import ReachSupport
import Testing

@Suite("History document: uptime and query")
struct HistoryDocumentTests {
    private func at(_ seconds: Int64) -> WallTime { WallTime(sinceEpoch: .seconds(seconds)) }

    @Test func unknownTimeCountsNeitherWay() {
        // 100 s: 10 s unknown, 20 s down (5 of them inside the gap), the rest up.
        let uptime = HistoryDocument.Uptime(
            window: at(0)..<at(100),
            outages: [at(25)..<at(45)],
            gaps: [at(20)..<at(30)]
        )
        #expect(uptime.unknownSeconds == 10)
        #expect(uptime.disconnectedSeconds == 15)
        #expect(uptime.connectedSeconds == 75)
        #expect(uptime.ratio == 75.0 / 90.0)
    }

    @Test func spansOutsideTheWindowAreClippedAndOverlapsMerged() {
        let uptime = HistoryDocument.Uptime(
            window: at(100)..<at(200),
            outages: [at(50)..<at(110), at(105)..<at(120), at(190)..<at(300)],
            gaps: []
        )
        #expect(uptime.disconnectedSeconds == 30)
        #expect(uptime.connectedSeconds == 70)
    }

    @Test func aWindowWithoutKnownTimeHasNoRatio() {
        let uptime = HistoryDocument.Uptime(window: at(0)..<at(10), outages: [], gaps: [at(-5)..<at(20)])
        #expect(uptime.ratio == nil)
        #expect(uptime.unknownSeconds == 10)
        let json = String(decoding: APIJSON.encode(uptime), as: UTF8.self)
        #expect(json.contains(#""ratio":null"#))
    }

    @Test func aBarIsComputedFromTheDocumentsLists() {
        let document = HistoryDocument(
            since: RFC3339.string(from: at(0)),
            until: RFC3339.string(from: at(100)),
            outages: [
                .init(
                    start: RFC3339.string(from: at(90)),
                    end: nil,
                    durationSeconds: 10,
                    reason: "timeout",
                    fault: "server",
                    target: "api"
                )
            ],
            uptime: .init(ratio: 0.9, connectedSeconds: 90, disconnectedSeconds: 10, unknownSeconds: 0)
        )
        #expect(document.uptime(over: at(50)..<at(100)).disconnectedSeconds == 10)
        #expect(document.uptime(over: at(0)..<at(50)).ratio == 1)
    }

    @Test func theQueryReadsDurationsAndTimes() throws {
        let now = at(1_800_000_000)
        let day = try HistoryQuery(since: nil, until: nil, target: nil, now: now)
        #expect(day.window == at(1_800_000_000 - 86_400)..<now)
        let week = try HistoryQuery(since: "7d", until: nil, target: "api", now: now)
        #expect(week.window.lowerBound == at(1_800_000_000 - 7 * 86_400))
        #expect(week.target == "api")
        let fixed = try HistoryQuery(
            since: "2027-01-15T08:00:00Z",
            until: "2027-01-15T10:00:00+01:00",
            target: nil,
            now: now
        )
        #expect(fixed.window.upperBound == RFC3339.wallTime(from: "2027-01-15T09:00:00Z"))
    }

    @Test(
        arguments: [
            ("yesterday", nil), (nil, "soon"), ("2027-01-15T10:00:00Z", "2027-01-15T09:00:00Z"), ("0s", nil),
        ] as [(String?, String?)]
    )
    func badParametersAreProblems(since: String?, until: String?) {
        #expect(throws: HistoryQuery.Problem.self) {
            try HistoryQuery(since: since, until: until, target: nil, now: at(1_800_000_000))
        }
    }

    @Test func theQueryStringEscapesOffsets() {
        #expect(
            HistoryQuery.queryString(since: "2027-01-15T08:00:00+01:00", target: "a b")
                == "since=2027-01-15T08%3A00%3A00%2B01%3A00&target=a%20b"
        )
        #expect(HistoryQuery.queryString(since: nil) == "")
    }
}
