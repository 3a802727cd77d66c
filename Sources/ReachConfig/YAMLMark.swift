/// Where in a YAML text a node or a problem starts, as libyaml counts: lines and columns from 1,
/// columns in Unicode scalars.
struct YAMLMark: Hashable, Sendable, CustomStringConvertible {
    var line: Int
    var column: Int

    var description: String { "\(line):\(column)" }

    /// The mark's line with a caret under its column, for an error's description.
    func snippet(in text: String) -> String {
        let line = YAMLLines.line(line - 1, of: text)
        let scalars = line.unicodeScalars
        let column =
            scalars.index(scalars.startIndex, offsetBy: column - 1, limitedBy: scalars.endIndex) ?? scalars.endIndex
        let indent = line.utf16.distance(from: line.utf16.startIndex, to: column)
        return YAMLLines.endingWithLineBreak(line) + String(repeating: " ", count: indent) + "^"
    }
}

/// Lines of a text as an error's description quotes them: a line ends after LF, CR, CR LF, NEL,
/// LS or PS, and keeps its break.
enum YAMLLines {
    /// The `number`th line (from 0); the last one if there are fewer.
    static func line(_ number: Int, of text: String) -> String {
        var (start, end) = (text.startIndex, lineEnd(from: text.startIndex, in: text))
        var count = 0
        while count < number && end < text.endIndex {
            count += 1
            (start, end) = (end, lineEnd(from: end, in: text))
        }
        return String(text[start..<end])
    }

    /// The line (from 0) holding `index`, the UTF-16 column of `index` in it (from 0), and the line.
    static func location(of index: String.Index, in text: String) -> (line: Int, column: Int, contents: String) {
        var (start, end) = (text.startIndex, lineEnd(from: text.startIndex, in: text))
        var count = 0
        while end <= index && end < text.endIndex {
            count += 1
            (start, end) = (end, lineEnd(from: end, in: text))
        }
        return (count, text.utf16.distance(from: start, to: index), String(text[start..<end]))
    }

    static func endingWithLineBreak(_ line: String) -> String {
        guard let last = line.unicodeScalars.last, isLineBreak(last) || (0x0B...0x0C).contains(last.value) else {
            return line + "\n"
        }
        return line
    }

    private static func isLineBreak(_ scalar: Unicode.Scalar) -> Bool {
        ["\n", "\r", "\u{85}", "\u{2028}", "\u{2029}"].contains(scalar)
    }

    /// Where the line that starts at `start` ends: after its break, or at the end of the text.
    private static func lineEnd(from start: String.Index, in text: String) -> String.Index {
        let scalars = text.unicodeScalars
        var index = start
        while index < scalars.endIndex {
            let scalar = scalars[index]
            index = scalars.index(after: index)
            if scalar == "\r", index < scalars.endIndex, scalars[index] == "\n" { return scalars.index(after: index) }
            if isLineBreak(scalar) { return index }
        }
        return scalars.endIndex
    }
}
