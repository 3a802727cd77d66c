/// Markup that is safe to put in a page: text from a status document becomes markup only through
/// ``init(text:)`` or interpolation, which escape it; the page's own tags are written as literals.
///
/// Target names, reasons and details come from configuration files and from remote servers' words
/// (a TLS verifier's complaint, an HTTP status line): escaping them in one place means no section of
/// the page can forget to.
package struct HTML: Sendable, Hashable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The markup.
    package private(set) var markup: String

    /// Markup written by the page itself, trusted as is.
    package init(stringLiteral markup: String) {
        self.markup = markup
    }

    /// Text shown as text: `&`, `<`, `>`, `"` and `'` escaped, so it is safe in content and in quoted attributes.
    package init(text: String) {
        markup = HTML.escape(text)
    }

    package init(stringInterpolation: Interpolation) {
        markup = stringInterpolation.markup
    }

    package var description: String { markup }

    /// Joins pieces of markup.
    package static func joined(_ pieces: some Sequence<HTML>, separator: HTML = "") -> HTML {
        HTML(stringLiteral: pieces.map(\.markup).joined(separator: separator.markup))
    }

    package static func + (lhs: HTML, rhs: HTML) -> HTML { HTML(stringLiteral: lhs.markup + rhs.markup) }

    /// `text` with the five characters that HTML gives meaning escaped.
    package static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// Interpolation that escapes strings and numbers and inserts ``HTML`` as it is.
    package struct Interpolation: StringInterpolationProtocol {
        var markup = ""

        package init(literalCapacity: Int, interpolationCount: Int) {
            markup.reserveCapacity(literalCapacity * 2)
        }

        package mutating func appendLiteral(_ literal: String) { markup += literal }
        package mutating func appendInterpolation(_ html: HTML) { markup += html.markup }
        package mutating func appendInterpolation(_ text: String) { markup += HTML.escape(text) }
        package mutating func appendInterpolation(_ text: String?) { markup += HTML.escape(text ?? "") }
        package mutating func appendInterpolation<Number: BinaryInteger>(_ number: Number) { markup += "\(number)" }
    }
}
