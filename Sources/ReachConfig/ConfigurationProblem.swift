/// One thing wrong with a configuration file, located as precisely as the YAML parser allows.
public struct ConfigurationProblem: Sendable, Hashable, CustomStringConvertible {
    /// The file (or "embedded default") the problem is in.
    public var source: String
    /// The key path, e.g. `targets[2].timeout`; empty for the document as a whole.
    public var keyPath: String
    public var line: Int?
    public var column: Int?
    public var message: String

    public init(source: String, keyPath: String, line: Int? = nil, column: Int? = nil, message: String) {
        self.source = source
        self.keyPath = keyPath
        self.line = line
        self.column = column
        self.message = message
    }

    /// `FILE:LINE:COLUMN: KEY.PATH: message`, the shape compilers use, so editors can jump to it.
    public var description: String {
        var location = source
        if let line {
            location += ":\(line)"
            if let column { location += ":\(column)" }
        }
        return keyPath.isEmpty ? "\(location): \(message)" : "\(location): \(keyPath): \(message)"
    }
}

/// Every problem found in a configuration: reading stops at none of them, so one run reports all.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public var problems: [ConfigurationProblem]

    public init(problems: [ConfigurationProblem]) {
        self.problems = problems
    }

    public var description: String { problems.map(\.description).joined(separator: "\n") }
}
