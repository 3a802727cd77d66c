/// Where and for how long reachd keeps its history (the `history` section): every transition and
/// a per-target per-minute rollup, in a SQLite file that survives restarts.
package struct HistorySettings: Sendable, Hashable {
    /// Whether reachd records history at all.
    package var enabled: Bool
    /// The file; `nil` for the default: `$STATE_DIRECTORY/history.sqlite` under systemd's
    /// `StateDirectory=reachd`, else `/var/lib/reachd/history.sqlite` (see ``resolvedPath(environment:)``).
    package var path: String?
    /// How long rows are kept; older ones are deleted.
    package var retention: Duration
    /// The most bytes the file's used pages may take; past it the oldest minutes, then the oldest
    /// transitions, are deleted until it is back under nine tenths of it.
    package var maximumSize: Int

    package static let defaultDirectory = "/var/lib/reachd"
    package static let fileName = "history.sqlite"

    package init(
        enabled: Bool = true,
        path: String? = nil,
        retention: Duration = .seconds(90 * 86_400),
        maximumSize: Int = 256 << 20
    ) {
        self.enabled = enabled
        self.path = path
        self.retention = retention
        self.maximumSize = maximumSize
    }

    /// The file reachd opens, and whether reachd may create its directory: `history.path` (its
    /// directory created if need be); `$STATE_DIRECTORY/history.sqlite` (systemd made the directory);
    /// else `/var/lib/reachd/history.sqlite`, which reachd uses only when the directory exists (the
    /// unit's `StateDirectory=` or the package makes it), so that a run from a source tree or a
    /// test never scatters state into /var/lib.
    package func resolvedPath(environment: [String: String]) -> (path: String, createsDirectory: Bool) {
        if let path { return (path, true) }
        // systemd lists one directory per StateDirectory= entry, separated by colons.
        if let state = environment["STATE_DIRECTORY"]?.split(separator: ":").first, state.hasPrefix("/") {
            return ("\(state)/\(Self.fileName)", false)
        }
        return ("\(Self.defaultDirectory)/\(Self.fileName)", false)
    }
}
