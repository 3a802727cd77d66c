import ReachAPI
import ReachCore
import ReachServer
import ReachSupport

/// What the history store would answer for a window in which reachd recorded one outage: a stand-in
/// around the server (the store has tests of its own, on real files), so that the server's route,
/// parameters and errors are what is tested here.
struct HistoryStandIn: HistoryReading {
    func history(_ query: HistoryQuery) async throws -> HistoryDocument {
        let start = query.window.lowerBound
        let outageStart = start.advanced(by: .seconds(1))
        let outageEnd = outageStart.advanced(by: .seconds(1))
        let outage = HistoryDocument.Outage(
            start: RFC3339.string(from: outageStart),
            end: RFC3339.string(from: outageEnd),
            durationSeconds: 1,
            reason: "timeout",
            fault: "server",
            target: query.target ?? "api"
        )
        return HistoryDocument(
            since: RFC3339.string(from: start),
            until: RFC3339.string(from: query.window.upperBound),
            target: query.target,
            transitions: [
                .init(
                    at: outage.start,
                    state: "disconnected",
                    reason: "timeout",
                    fault: "server",
                    target: outage.target
                )
            ],
            outages: [outage],
            gaps: [],
            uptime: HistoryDocument.Uptime(window: query.window, outages: [outageStart..<outageEnd], gaps: [])
        )
    }
}
