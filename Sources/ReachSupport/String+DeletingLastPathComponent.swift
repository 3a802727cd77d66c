extension String {
    /// The path without its last component, as Foundation's `NSString.deletingLastPathComponent`
    /// gives it: `/a/b` for `/a/b/c` and `/a/b/c/`, `/` for `/c`, the empty string for `c`.
    package var deletingLastPathComponent: String {
        var path = Substring(self)
        while path.count > 1, path.hasSuffix("/") { path = path.dropLast() }
        guard let slash = path.lastIndex(of: "/") else { return "" }
        var directory = path[..<slash]
        while directory.hasSuffix("/") { directory = directory.dropLast() }
        return directory.isEmpty ? "/" : String(directory)
    }
}
