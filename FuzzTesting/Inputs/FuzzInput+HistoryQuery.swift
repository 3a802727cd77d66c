import ReachAPI
import ReachCore
import ReachSupport

extension FuzzInput {
    /// `GET /v1/history`'s parameters as the server reads them (`HistoryQuery`), and the RFC 3339
    /// times in them and in every document (`RFC3339`).
    ///
    /// The input is up to three lines: `since`, `until`, `target` (a missing line is a missing
    /// parameter). Every line is also read as an RFC 3339 time alone. A time that reads must be
    /// written back and read again as the same instant (to the millisecond reachd writes), and an
    /// accepted query's window must be written as times that read back.
    package static func historyQuery(_ bytes: [UInt8]) {
        let lines = fields(bytes, separator: UInt8(ascii: "\n")).map { text($0) }
        for line in lines { roundTripsAsRFC3339(line) }
        let parameter = { (index: Int) in index < lines.count ? lines[index] : nil }
        let now = WallTime(sinceEpoch: .seconds(1_800_000_000))
        guard let query = try? HistoryQuery(since: parameter(0), until: parameter(1), target: parameter(2), now: now)
        else { return }
        require(query.window.lowerBound < query.window.upperBound, "an empty window was accepted")
        require(query.target.map { !$0.isEmpty } ?? true, "an empty target was accepted")
        for bound in [query.window.lowerBound, query.window.upperBound] {
            require(
                RFC3339.wallTime(from: RFC3339.string(from: bound)) != nil,
                "a window bound written as \(RFC3339.string(from: bound)) does not read back"
            )
        }
    }

    /// A time that reads is written and read again as the same instant, to the millisecond.
    static func roundTripsAsRFC3339(_ text: String) {
        guard let time = RFC3339.wallTime(from: text) else { return }
        let written = RFC3339.string(from: time)
        guard let again = RFC3339.wallTime(from: written) else {
            preconditionFailure(
                "fuzz invariant broken: \"\(text)\" reads, but reachd writes it as \"\(written)\", which does not"
            )
        }
        let difference = time.sinceEpoch - again.sinceEpoch
        require(
            difference >= .zero && difference < .milliseconds(1),
            "\"\(text)\" came back as \"\(written)\", \(difference) off"
        )
    }
}
