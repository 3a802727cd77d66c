import ReachCore
import ReachSupport

/// A fact about the verdict beside its state and reason, which every rendering of the status
/// document shows alike: the status page's verdict card (its first paint, and its script on every
/// event) and `reachctl status`. A field a person should see is one entry in
/// ``StatusDocument/facts``; no renderer changes for it.
///
/// A fact's value is a list of codes (none when the document has none: `null`, or an empty list),
/// read as its words where a code alone would not say it to a person (a fault's sentence), else as
/// the code itself.
package struct VerdictFact: Sendable {
    /// The document's key (a dotted path into an object, as `quality.state`): the page's script
    /// reads the value of each event by it.
    package let key: String
    /// Names the page's elements: `verdict-ID` holds the value, `verdict-ID-row` the whole line.
    package let id: String
    /// How a person calls it: the page's label, and in lower case `reachctl status`'s.
    package let label: String
    /// Whether `reachctl status` gives it a line of its own (its reason line names the failing
    /// target already, and its uplink lines the degraded families).
    package let inSummary: Bool
    /// Each code's words, for codes a person would not read as they are.
    package let words: [String: String]
    /// The value's codes in `document`, as its ``key`` holds them.
    package let codes: @Sendable (StatusDocument) -> [String]

    package init(
        key: String,
        id: String? = nil,
        label: String,
        inSummary: Bool = true,
        words: [String: String] = [:],
        codes: @escaping @Sendable (StatusDocument) -> [String]
    ) {
        self.key = key
        self.id = id ?? key
        self.label = label
        self.inSummary = inSummary
        self.words = words
        self.codes = codes
    }

    /// `codes` as a person reads them, comma separated: what the page shows.
    package func text(_ codes: [String]) -> String {
        codes.map { words[$0] ?? $0 }.joined(separator: ", ")
    }

    /// `reachctl status`'s line: `fault:      server — The server is not responding — your network is fine.`
    package func summaryLine(_ codes: [String]) -> String {
        let name = label.lowercased() + ":"
        let said = codes.compactMap { words[$0] }
        return name + String(repeating: " ", count: max(1, 12 - name.count)) + codes.joined(separator: ", ")
            + (said.isEmpty ? "" : " — " + said.joined(separator: ", "))
    }

    /// An address family as a person writes it: `IPv4`, `IPv6`.
    package static let familyWords = Dictionary(
        uniqueKeysWithValues: IPFamily.allCases.map { ($0.rawValue, $0 == .ipv4 ? "IPv4" : "IPv6") }
    )

    /// Each fault's sentence (``FaultWords/sentence(_:)``).
    package static let faultWords = Dictionary(
        uniqueKeysWithValues: Fault.allCases.compactMap { fault in
            FaultWords.sentence(fault.code).map { (fault.code, $0) }
        }
    )
}

extension StatusDocument {
    /// Each of ``facts`` with its codes in this document, those without a value included.
    package var factValues: [(fact: VerdictFact, codes: [String])] {
        Self.facts.map { ($0, $0.codes(self)) }
    }
}
