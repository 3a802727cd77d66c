import ReachAPI

/// Where the status API reads history from: the composition root fills it with reachd's history
/// store, so that the server answers `GET /v1/history` (and the status page draws its uptime bars)
/// without linking SQLite.
public protocol HistoryReading: Sendable {
    /// What was recorded over `query`'s window.
    ///
    /// - Throws: ``HistoryUnavailable`` when history is off or its file cannot be used (`503`).
    func history(_ query: HistoryQuery) async throws -> HistoryDocument
}

/// History cannot answer: it is off, or its file could not be opened. The status API answers `503`
/// with ``reason``.
public struct HistoryUnavailable: Error, Sendable, CustomStringConvertible {
    /// Why, in words for the error document.
    public var reason: String

    public init(_ reason: String) {
        self.reason = reason
    }

    public var description: String { reason }
}
