import Synchronization

/// Hook names as metrics labels: the first 64 distinct names keep theirs, later ones share
/// `other`, so a directory that keeps changing cannot grow the metrics without bound.
final class HookNames: Sendable {
    static let limit = 64
    private let seen = Mutex<Set<String>>([])

    func label(_ name: String) -> String {
        seen.withLock { seen in
            if seen.contains(name) { return name }
            guard seen.count < Self.limit else { return "other" }
            seen.insert(name)
            return name
        }
    }
}
