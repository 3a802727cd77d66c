/// A YAML value to write as text, for the configuration built from command-line values: every
/// string is double-quoted with everything but printable ASCII escaped, so that a quote, a newline
/// or a `#` in a value stays inside it and adds no key of its own.
enum YAMLText {
    case string(String)
    case sequence([YAMLText])
    case mapping([(String, YAMLText)])

    /// The value in flow style (`{"key": ["a", "b"]}`), on one line.
    var text: String {
        switch self {
        case .string(let string): Self.quoted(string)
        case .sequence(let items): "[" + items.map(\.text).joined(separator: ", ") + "]"
        case .mapping(let pairs): "{" + pairs.map { "\(Self.quoted($0)): \($1.text)" }.joined(separator: ", ") + "}"
        }
    }

    private static func quoted(_ string: String) -> String {
        var text = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case " "..."~": text.unicodeScalars.append(scalar)
            default:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                text +=
                    scalar.value > 0xFFFF
                    ? "\\U" + String(repeating: "0", count: 8 - hex.count) + hex
                    : "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }
        return text + "\""
    }
}
