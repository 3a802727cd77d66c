/// One row of the matrix's table: a fault, what reachd said, and how fast.
import Foundation

struct MatrixCase {
    var group: String
    var name: String
    var expected: String
    var detected: Duration?
    var restored: Duration?
    var failure: String?

    var passed: Bool { failure == nil }

    static func seconds(_ duration: Duration?) -> String {
        guard let duration else { return "-" }
        return String(
            format: "%.2f s",
            Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        )
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// The table, one line per case, columns padded.
    static func table(_ cases: [MatrixCase]) -> String {
        let header = ["group", "case", "expected verdict", "detected", "restored", "result"]
        let rows = cases.map { row in
            [
                row.group, row.name, row.expected, seconds(row.detected), seconds(row.restored),
                row.failure.map { "FAIL: \($0)" } ?? "ok",
            ]
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: " | ")
        }
        return
            ([line(header), widths.map { String(repeating: "-", count: $0) }.joined(separator: "-+-")] + rows.map(line))
            .joined(separator: "\n")
    }
}
