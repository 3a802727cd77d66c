import ArgumentParser
import ReachAPI
import ReachClient

extension ReachctlCommand {
    /// `reachctl history`: the outages reachd recorded, as a table, from `GET /v1/history`.
    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the outages reachd recorded (start, duration, reason, fault, target), with the uptime.",
            discussion: """
                History survives restarts (reachd keeps it in its state directory). Time reachd \
                did not record counts neither as uptime nor as downtime.

                Exit status: 0 listed, 2 reachd unreachable or history unavailable.
                """
        )

        @ParentCommand var root: ReachctlCommand

        @Option(
            help: ArgumentHelp(
                "How far back: a duration such as 24h, 7d or 90m, or an RFC 3339 time.",
                valueName: "since"
            )
        )
        var since = "24h"

        @Option(
            help: ArgumentHelp("One target's unhealthy spells instead of the verdict's outages.", valueName: "name")
        )
        var target: String?

        @Flag(help: "Print the history document as reachd sent it (JSON).")
        var json = false

        func run() async throws {
            let client = try root.client()
            let answer: HistoryAnswer
            do {
                answer = try await client.history(since: since, target: target)
            } catch {
                Output.error("reachctl: \(error)")
                throw ExitCode(ExitStatus.unreachable)
            }
            if json {
                Output.line(answer.json)
            } else {
                for line in Self.table(answer.document) { Output.line(line) }
            }
        }

        /// The outages as aligned columns, the impaired spells (connected, but slow or lossy) the
        /// same way when there were any, then the uptime in a line.
        static func table(_ document: HistoryDocument) -> [String] {
            let spell = { (outage: HistoryDocument.Outage) in
                [
                    outage.start, duration(outage.durationSeconds) + (outage.end == nil ? " (ongoing)" : ""),
                    outage.reason ?? "-",
                    outage.fault ?? "-", outage.target ?? "-",
                ]
            }
            var lines: [String] = []
            if document.outages.isEmpty {
                lines.append("no outages from \(document.since) to \(document.until)")
            } else {
                lines += columns(["START", "DURATION", "REASON", "FAULT", "TARGET"], document.outages.map(spell))
            }
            if !document.impaired.isEmpty {
                lines += columns(["IMPAIRED", "DURATION", "MEASURES", "WHERE", "TARGET"], document.impaired.map(spell))
            }
            let uptime = document.uptime
            let ratio = uptime.ratio.map { "\(percent($0)) up" } ?? "no known time"
            lines.append(
                "uptime: \(ratio) (\(duration(uptime.connectedSeconds)) connected, \(duration(uptime.disconnectedSeconds)) disconnected, \(duration(uptime.unknownSeconds)) unknown)"
            )
            return lines
        }

        /// `rows` under `header`, each column as wide as its widest cell.
        static func columns(_ header: [String], _ rows: [[String]]) -> [String] {
            let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
            return ([header] + rows).map { row in
                zip(row, widths).map { $0 + String(repeating: " ", count: $1 - $0.count) }.joined(separator: "  ")
                    .trimmingSuffixSpaces
            }
        }

        /// `1h2m3s`, `4.5s`, `2d3h`: short and exact enough for a person.
        static func duration(_ seconds: Double) -> String {
            if seconds < 60 {
                return seconds < 10 && seconds != seconds.rounded()
                    ? "\((seconds * 10).rounded() / 10)s" : "\(Int(seconds.rounded()))s"
            }
            var rest = Int(seconds.rounded())
            var parts: [String] = []
            for (unit, size) in [("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)]
            where rest >= size || (!parts.isEmpty && size == 1 && rest > 0) {
                parts.append("\(rest / size)\(unit)")
                rest %= size
                if parts.count == 2 { break }
            }
            return parts.joined()
        }

        static func percent(_ ratio: Double) -> String {
            let value = (ratio * 100_000).rounded(.down) / 1000
            return "\(value)%"
        }
    }
}

extension String {
    fileprivate var trimmingSuffixSpaces: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
