/// A shell-style pattern over unicode scalars: `*`, `?`, `[a-z]`, `[!0-9]` (or `[^0-9]`), and any
/// other character for itself; a `[` with no `]` after it is a plain `[`.
///
/// The one reading of a glob: ReachCore's `InterfaceFilter` matches interface names with it, and the
/// configuration asks it for ranges that match nothing, so both see the same brackets.
package struct Glob: Sendable {
    /// One scalar of a bracket expression, or a range of them; a range written backwards
    /// (`9-0`) contains nothing, as in fnmatch.
    package struct Span: Sendable {
        package let lower: Unicode.Scalar
        package let upper: Unicode.Scalar

        package var isReversed: Bool { lower > upper }

        func contains(_ scalar: Unicode.Scalar) -> Bool { lower <= scalar && scalar <= upper }
    }

    enum Element: Sendable {
        /// `*`: any run of scalars, the empty one too.
        case anyRun
        /// `?`: one scalar.
        case anyOne
        case scalar(Unicode.Scalar)
        /// `[...]`: one scalar in (or, negated, not in) the spans.
        case bracket([Span], negated: Bool)
    }

    let elements: [Element]

    package init(_ pattern: String) {
        let p = Array(pattern.unicodeScalars)
        var elements: [Element] = []
        var index = 0
        while index < p.count {
            switch p[index] {
            case "*":
                elements.append(.anyRun)
            case "?":
                elements.append(.anyOne)
            case "[":
                // The first scalar after `[` (or `[!`) may itself be `]`: the search starts past it.
                guard let close = p[(index + 1)...].dropFirst().firstIndex(of: "]") else {
                    elements.append(.scalar("["))
                    break
                }
                var body = p[(index + 1)..<close]
                let negated = body.first == "!" || body.first == "^"
                if negated { body = body.dropFirst() }
                var spans: [Span] = []
                var i = body.startIndex
                while i < body.endIndex {
                    if i + 2 < body.endIndex, body[i + 1] == "-" {
                        spans.append(Span(lower: body[i], upper: body[i + 2]))
                        i += 3
                    } else {
                        spans.append(Span(lower: body[i], upper: body[i]))
                        i += 1
                    }
                }
                elements.append(.bracket(spans, negated: negated))
                index = close
            case let literal:
                elements.append(.scalar(literal))
            }
            index += 1
        }
        self.elements = elements
    }

    /// The ranges written backwards, like `9-0`, in the order they appear: each matches nothing,
    /// almost certainly not what was meant.
    package var reversedRanges: [Span] {
        elements.flatMap { element -> [Span] in
            guard case .bracket(let spans, _) = element else { return [] }
            return spans.filter(\.isReversed)
        }
    }

    /// Whether `name` matches the whole pattern. Iterative, backtracking only to the last `*`.
    package func matches(_ name: String) -> Bool {
        let s = Array(name.unicodeScalars)
        var pi = 0
        var si = 0
        var star: (p: Int, s: Int)? = nil
        while si < s.count {
            if pi < elements.count, case .anyRun = elements[pi] {
                star = (pi, si)
                pi += 1
            } else if pi < elements.count, Self.matches(elements[pi], s[si]) {
                pi += 1
                si += 1
            } else if let resume = star {
                pi = resume.p + 1
                si = resume.s + 1
                star = (resume.p, resume.s + 1)
            } else {
                return false
            }
        }
        while pi < elements.count, case .anyRun = elements[pi] { pi += 1 }
        return pi == elements.count
    }

    private static func matches(_ element: Element, _ scalar: Unicode.Scalar) -> Bool {
        switch element {
        case .anyRun, .anyOne: true
        case .scalar(let literal): literal == scalar
        case .bracket(let spans, let negated): spans.contains { $0.contains(scalar) } != negated
        }
    }
}
