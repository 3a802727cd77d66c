import ReachAPI

/// Where the status API reads history from: the composition root fills it with reachd's history
/// store, so that the server answers `GET /v1/history` (and the status page draws its uptime bars)
/// without linking SQLite.
package protocol HistoryReading: Sendable {
    /// What was recorded over `query`'s window.
    ///
    /// - Throws: ``HistoryUnavailable`` when history is off or its file cannot be used (`503`).
    func history(_ query: HistoryQuery) async throws -> HistoryDocument
}

/// History cannot answer: it is off, or its file could not be opened. The status API answers `503`
/// with ``reason``.
package struct HistoryUnavailable: Error, Sendable, CustomStringConvertible {
    /// Why, in words for the error document.
    package var reason: String

    package init(_ reason: String) {
        self.reason = reason
    }

    package var description: String { reason }
}
