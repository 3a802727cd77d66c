/// A target's latency over the last minutes as a small inline SVG line: no library, no canvas, and
/// readable without the script. The script draws the same chart the same way as events arrive.
struct LatencyChart {
    /// The span the chart covers, ending now.
    static let window = 600.0
    static let width = 300.0
    static let height = 48.0

    var points: [PageHistory.LatencyPoint]
    var now: Double

    func svg(label: String) -> HTML {
        let visible = points.filter { $0.epochSeconds >= now - Self.window }
        let top = max(visible.map(\.seconds).max() ?? 0, 0.001)
        let coordinates = visible.map { point in
            (
                x: Self.rounded((point.epochSeconds - (now - Self.window)) / Self.window * Self.width),
                y: Self.rounded(Self.height - 2 - point.seconds / top * (Self.height - 4))
            )
        }
        let line: HTML =
            if coordinates.count > 1 {
                "<polyline class=\"line\" points=\"\(coordinates.map { "\($0.x),\($0.y)" }.joined(separator: " "))\"/>"
            } else if let only = coordinates.first {
                "<circle class=\"dot\" r=\"2\" cx=\"\(only.x)\" cy=\"\(only.y)\"/>"
            } else {
                ""
            }
        return """
            <svg class="chart" viewBox="0 0 \(Int(Self.width)) \(Int(Self.height))" preserveAspectRatio="none" role="img" aria-label="\(label)">\
            <line class="axis" x1="0" y1="\(Int(Self.height) - 1)" x2="\(Int(Self.width))" y2="\(Int(Self.height) - 1)"/>\(line)</svg>
            """
    }

    private static func rounded(_ value: Double) -> String { "\((value * 10).rounded() / 10)" }
}

/// An uptime window as a row of segments, oldest on the left, each coloured by its uptime and
/// never by colour alone: the window's ratio and outage count are written beside it and in its name.
struct UptimeBar {
    var segments: [Double?]

    func svg(label: String) -> HTML {
        let rects = segments.enumerated().map { index, ratio -> HTML in
            let kind =
                switch ratio {
                case nil: "none"
                case let ratio? where ratio >= 1: "up"
                case let ratio? where ratio >= 0.99: "partial"
                default: "down"
                }
            return "<rect class=\"seg \(kind)\" x=\"\(index * 4)\" y=\"0\" width=\"3\" height=\"20\" rx=\"1\"/>"
        }
        return """
            <svg class="bars" viewBox="0 0 \(max(segments.count * 4 - 1, 1)) 20" preserveAspectRatio="none" role="img" aria-label="\(label)">\(HTML.joined(rects))</svg>
            """
    }
}
