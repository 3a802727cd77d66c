/// Why a YAML text could not be composed into a document: libyaml's own words and positions, and
/// the composer's (a duplicated key, an undefined alias, a second document).
///
/// The description is the one the configuration's errors quoted when reachd read YAML through Yams
/// (`LINE:COLUMN: error: KIND: PROBLEM:` and the line with a caret), so that no message changed
/// when libyaml came to be called directly.
enum YAMLError: Error, CustomStringConvertible {
    /// What libyaml says it has no memory for.
    case memory
    /// The text cannot be read as YAML characters (a control character, say); `offset` counts the
    /// text's characters, `nil` when the byte libyaml names is inside one.
    case reader(problem: String, offset: Int?, value: Int32, yaml: String)
    case scanner(context: Context?, problem: String, YAMLMark, yaml: String)
    case parser(context: Context?, problem: String, YAMLMark, yaml: String)
    case composer(context: Context?, problem: String, YAMLMark, yaml: String)
    /// A mapping names one key twice (`duplicates`: each such key's text); `context` is where the first is.
    case duplicatedKeysInMapping(duplicates: [String], context: Context)

    /// What libyaml was reading when it found a problem, and where that began.
    struct Context: CustomStringConvertible {
        let text: String
        let mark: YAMLMark

        var description: String { text + " in line \(mark.line), column \(mark.column)\n" }
    }

    var description: String {
        switch self {
        case .memory:
            return "Memory error"
        case .reader(let problem, let offset, let value, let yaml):
            guard let offset, let index = yaml.index(yaml.startIndex, offsetBy: offset, limitedBy: yaml.endIndex) else {
                return "\(problem) at offset: \(String(describing: offset)), value: \(value)"
            }
            let (line, column, contents) = YAMLLines.location(of: index, in: yaml)
            let mark = YAMLMark(line: line + 1, column: column + 1)
            return "\(mark): error: reader: \(problem):\n" + YAMLLines.endingWithLineBreak(contents)
                + String(repeating: " ", count: column) + "^"
        case .scanner(let context, let problem, let mark, let yaml):
            return "\(mark): error: scanner: \(context?.description ?? "")\(problem):\n" + mark.snippet(in: yaml)
        case .parser(let context, let problem, let mark, let yaml):
            return "\(mark): error: parser: \(context?.description ?? "")\(problem):\n" + mark.snippet(in: yaml)
        case .composer(let context, let problem, let mark, let yaml):
            return "\(mark): error: composer: \(context?.description ?? "")\(problem):\n" + mark.snippet(in: yaml)
        case .duplicatedKeysInMapping(let duplicates, let context):
            let keys = duplicates.sorted().map { "'\($0)'" }.joined(separator: ", ")
            return """
                Parser: expected all keys to be unique but found the following duplicated key(s): \(keys).
                Context:
                \(context.description)
                """
        }
    }
}
