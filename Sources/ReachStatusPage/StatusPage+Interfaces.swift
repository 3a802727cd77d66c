import ReachAPI

extension StatusPage {
    /// One line of the interfaces list: an uplink's own reachability (the document's `interfaces`),
    /// or, for a usable interface that is not an uplink, only that its link is usable.
    struct InterfaceLine: Hashable {
        var name: String
        /// `healthy` (reaches the targets), `unhealthy`, `unknown` (not yet known) or `usable`.
        var state: String
        var reason: String?
        var fault: String?
        var latencySeconds: Double?

        /// The uplinks first, in index order, then the usable interfaces that are not uplinks.
        static func of(_ status: StatusDocument) -> [InterfaceLine] {
            let uplinks = status.interfaces.map { uplink in
                InterfaceLine(
                    name: uplink.name,
                    state: uplink.reachable.map { $0 ? "healthy" : "unhealthy" } ?? "unknown",
                    reason: uplink.reason,
                    fault: uplink.fault,
                    latencySeconds: uplink.latencySeconds
                )
            }
            let others = status.usableInterfaces.filter { name in !uplinks.contains { $0.name == name } }
            return uplinks + others.map { InterfaceLine(name: $0, state: "usable") }
        }
    }

    var interfacesSection: HTML {
        let lines = InterfaceLine.of(status)
        return """
            <section class="card" aria-labelledby="interfaces-heading">
            <h2 id="interfaces-heading">Interfaces</h2>
            <ul id="interfaces" class="plain">\(HTML.joined(lines.map(interfaceItem)))</ul>
            <p id="interfaces-none" class="muted"\(lines.isEmpty ? "" : " hidden")>No interface gives a usable link.</p>
            </section>
            """
    }

    /// The same markup the script builds for a live update (`renderInterfaces`).
    private func interfaceItem(_ line: InterfaceLine) -> HTML {
        func row(_ label: String, _ name: String, _ words: String?) -> HTML {
            "<div class=\"\(name)-row\"\(words == nil ? " hidden" : "")><dt>\(label)</dt><dd class=\"\(name)\">\(words)</dd></div>"
        }
        return """
            <li class="interface" data-interface="\(line.name)" data-state="\(line.state)">
            <div class="item-head"><h3>\(line.name)</h3>\
            <span class="badge">\(Icons.state)<span class="interface-word">\(PageWords.uplink(line.state))</span></span></div>
            <dl class="facts">\(row("Why", "reason", line.reason.map(PageWords.reason)))\(row("Fault", "fault", line.fault.map(PageWords.fault)))\
            \(row("Latency", "latency", line.latencySeconds.map(PageWords.latency)))</dl>
            </li>
            """
    }
}
