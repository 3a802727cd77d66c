import ReachAPI
import ReachCore
import ReachSupport

/// The page's words for codes of the status document: one table, which the script reads too (the
/// page embeds it as JSON), so a live update says the same as the first paint.
enum PageWords {
    /// The verdict's word for a state code.
    static func state(_ code: String) -> String {
        switch code {
        case "connected": "Connected"
        case "disconnected": "Disconnected"
        default: "Unknown"
        }
    }

    /// A target's health in a word.
    static func health(_ code: String) -> String {
        switch code {
        case "healthy": "Healthy"
        case "unhealthy": "Unhealthy"
        default: "Not yet known"
        }
    }

    /// An interface's line in a word, by its state: an uplink that reaches the targets (`healthy`)
    /// or not (`unhealthy`), one not yet known, or an interface that only gives a usable link.
    static func uplink(_ state: String) -> String {
        switch state {
        case "healthy": "Reaches the targets"
        case "unhealthy": "Does not reach the targets"
        case "usable": "Usable link"
        default: "Not yet known"
        }
    }

    /// An address family as a person writes it: `IPv4`, `IPv6` (``ReachAPI/VerdictFact/familyWords``);
    /// the code for one this version does not know.
    static func family(_ code: String) -> String { VerdictFact.familyWords[code] ?? code }

    /// Address families, comma separated.
    static func families(_ codes: [String]) -> String { codes.map(family).joined(separator: ", ") }

    /// Where the path breaks, for a person: the words of ``ReachAPI/FaultWords``, the table that
    /// `reachctl` and the desktop notification read; the code itself for one this version does not know.
    static func fault(_ code: String) -> String { FaultWords.sentence(code) ?? code }

    /// The reason code in words.
    static func reason(_ code: String) -> String { ReasonWords.of(code: code).clause }

    /// The embedded table for the script: states, healths, faults, reasons, interface states and address families.
    static var table: [String: [String: String]] {
        func words(_ codes: [String], _ word: (String) -> String) -> [String: String] {
            Dictionary(uniqueKeysWithValues: codes.map { ($0, word($0)) })
        }
        return [
            "states": words(["connected", "disconnected", "unknown"], state),
            "healths": words(["healthy", "unhealthy", "unknown"], health),
            "uplinks": words(["healthy", "unhealthy", "unknown", "usable"], uplink),
            "families": words(IPFamily.allCases.map(\.rawValue), family),
            "faults": words(Fault.allCases.map(\.code), fault),
            "reasons": words(ReasonWords.all.map(\.code), reason),
        ]
    }

    /// JSON text made safe inside a `<script>` element: `<` (which occurs only inside strings) becomes
    /// `\u003c`, so no `</script>` or `<!--` in a target's name can end or bend the element.
    static func scriptSafe(_ json: String) -> String {
        json.unicodeScalars.map { $0 == "<" ? "\\u003c" : String($0) }.joined()
    }

    /// An RFC 3339 time as a person reads it: `2027-01-15 08:00:00 UTC`.
    static func time(_ rfc3339: String) -> String {
        guard rfc3339.count >= 19 else { return rfc3339 }
        return String(rfc3339.prefix(19).map { $0 == "T" ? " " : $0 }) + " UTC"
    }

    /// A span in the largest units that matter: `45 s`, `3 min`, `2 h 5 min`, `4 d 3 h`.
    static func span(seconds: Double) -> String {
        let total = max(0, Int(seconds))
        let (days, hours, minutes) = (total / 86_400, total / 3600 % 24, total / 60 % 60)
        if days > 0 { return hours > 0 ? "\(days) d \(hours) h" : "\(days) d" }
        if hours > 0 { return minutes > 0 ? "\(hours) h \(minutes) min" : "\(hours) h" }
        if minutes > 0 { return "\(minutes) min" }
        return "\(total) s"
    }

    /// A latency: `12 ms`, `1.25 s`.
    static func latency(_ seconds: Double) -> String {
        seconds < 1 ? "\(Int((seconds * 1000).rounded())) ms" : "\((seconds * 100).rounded() / 100) s"
    }

    /// A target's quality line: `good (median 12 ms, 0 % lost)`, `impaired: 412 ms (budget 300 ms)`,
    /// `not judged yet (…)`; empty for a target without a budget. The script says the same.
    static func quality(_ quality: StatusDocument.TargetQuality?, window: StatusDocument.QualityWindow?) -> String {
        guard let window else { return "" }
        let measures =
            "median \(window.latencySeconds.map(latency) ?? "—"), "
            + "\(window.loss.map(StatusDocument.QualityFinding.percent) ?? "—") lost"
        guard let quality else { return "not judged yet (\(measures))" }
        guard quality.state == QualityState.impaired.rawValue else { return "good (\(measures))" }
        return "impaired: " + quality.exceeded.map(\.phrase).joined(separator: ", ")
    }

    /// A ratio as a percentage with two decimals, rounded down so that a single failure never shows as 100 %.
    static func percent(_ ratio: Double) -> String {
        let hundredths = Int((ratio * 10_000).rounded(.down))
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction) %"
    }
}
