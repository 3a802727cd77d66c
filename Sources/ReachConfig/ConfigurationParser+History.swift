import ReachCore
import ReachSupport

extension ConfigurationParser {
    static let historyKeys = ["enabled", "path", "retention", "max_size"]
    static let historyRetentionRange = Duration.seconds(3600)...Duration.seconds(10 * 366 * 86_400)
    static let historySizeRange = (1 << 20)...(1 << 40)

    /// The `history` section.
    mutating func parseHistory(_ node: ConfigNode) -> HistorySettings? {
        guard let entries = reader.mapping(node, keys: Self.historyKeys) else { return nil }
        var settings = HistorySettings()
        if let node = entries["enabled"], let enabled = reader.boolean(node) { settings.enabled = enabled }
        if let node = entries["path"],
            let path = reader.string(node, expected: "a file path, like /var/lib/reachd/history.sqlite")
        {
            if path.hasPrefix("/"), !path.hasSuffix("/") {
                settings.path = path
            } else {
                reader.report("expected an absolute file path, like /var/lib/reachd/history.sqlite", at: node)
            }
        }
        if let node = entries["retention"], let retention = reader.duration(node, in: Self.historyRetentionRange) {
            settings.retention = retention
        }
        if let node = entries["max_size"], let size = parseSize(node) { settings.maximumSize = size }
        return settings
    }

    /// A size like `256MiB`, `1GB` or a number of bytes, within ``historySizeRange``.
    private mutating func parseSize(_ node: ConfigNode) -> Int? {
        let expected = "a size like 256MiB, 2GiB or 500MB (from 1MiB to 1TiB)"
        guard let text = reader.scalar(node, expected: expected) else { return nil }
        let units: [(String, Double)] = [
            ("KiB", 1024), ("MiB", 1_048_576), ("GiB", 1_073_741_824), ("TiB", 1_099_511_627_776), ("KB", 1e3),
            ("MB", 1e6), ("GB", 1e9), ("TB", 1e12), ("B", 1), ("", 1),
        ]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            guard let number = Double(String(text.dropLast(suffix.count)).trimmingWhitespace), number.isFinite,
                number >= 0
            else { break }
            let bytes = number * scale
            guard bytes <= Double(Self.historySizeRange.upperBound), Self.historySizeRange.contains(Int(bytes)) else {
                break
            }
            return Int(bytes)
        }
        reader.report("expected \(expected), found \(node.summary)", at: node)
        return nil
    }
}
