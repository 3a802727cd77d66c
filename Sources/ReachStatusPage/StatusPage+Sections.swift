import ReachAPI
import ReachCore
import ReachSupport

extension StatusPage {
    var targetsSection: HTML {
        let items = status.targets.map(targetItem)
        return """
            <section class="card" aria-labelledby="targets-heading">
            <h2 id="targets-heading" tabindex="-1">Targets</h2>
            <ul id="targets" class="targets">\(HTML.joined(items))</ul>
            \(status.targets.isEmpty ? "<p class=\"muted\">No targets are configured.</p>" : "" as HTML)
            </section>
            """
    }

    private func targetItem(_ target: StatusDocument.Target) -> HTML {
        let points =
            (history?.latency[target.name] ?? [])
            + (target.latencySeconds.map {
                [PageHistory.LatencyPoint(epochSeconds: now.secondsSinceEpoch, seconds: $0)]
            } ?? [])
        return """
            <li class="target" data-target="\(target.name)" data-state="\(target.health)">
            <div class="item-head"><h3>\(target.name)</h3>
            <span class="badge">\(Icons.state)<span class="health-word">\(PageWords.health(target.health))</span></span></div>
            <p class="target-detail muted">\(targetDetail(target))</p>
            <dl class="facts">
            <div><dt>Latency</dt><dd class="latency">\(target.latencySeconds.map(PageWords.latency) ?? "—")</dd></div>
            <div class="cert-row"\(target.certificate == nil ? " hidden" : "")><dt>Certificate expires</dt><dd class="cert">\(certificateWords(target.certificate))</dd></div>
            <div class="families-row"\(target.degradedFamilies.isEmpty ? " hidden" : "")><dt>Degraded address family</dt><dd class="families">\(PageWords.families(target.degradedFamilies))</dd></div>
            <div class="quality-row"\(target.qualityWindow == nil ? " hidden" : "")><dt>Quality</dt><dd class="quality">\(PageWords.quality(target.quality, window: target.qualityWindow))</dd></div>
            </dl>
            \(LatencyChart(points: points, now: now.secondsSinceEpoch).svg(label: "Latency of \(target.name) over the last minutes"))
            </li>
            """
    }

    private func targetDetail(_ target: StatusDocument.Target) -> String {
        var words = target.kind.uppercased()
        if let reason = target.reason { words += " · " + PageWords.reason(reason) }
        if let detail = target.detail, detail != target.reason.map(PageWords.reason) { words += ": " + detail }
        return words
    }

    private func certificateWords(_ certificate: StatusDocument.Certificate?) -> String {
        guard let certificate, let notAfter = RFC3339.wallTime(from: certificate.notAfter) else { return "" }
        let left = notAfter.secondsSinceEpoch - now.secondsSinceEpoch
        let relative =
            left < 0 ? "expired \(PageWords.span(seconds: -left)) ago" : "in \(PageWords.span(seconds: left))"
        return "\(PageWords.time(certificate.notAfter)) (\(relative))"
    }

    var uptimeSection: HTML {
        guard let history else {
            return """
                <section class="card" aria-labelledby="uptime-heading">
                <h2 id="uptime-heading">Uptime</h2>
                <p id="no-history" class="muted">No history: this reachd keeps none, so there are no uptime bars and no past transitions to show.</p>
                </section>
                """
        }
        let windows = history.uptime.map { window -> HTML in
            let ratio = window.ratio.map(PageWords.percent) ?? "no data"
            let outages = window.outages == 1 ? "1 outage" : "\(window.outages) outages"
            return """
                <li class="uptime" data-window="\(window.label)" data-ratio="\(window.ratio.map { "\($0)" } ?? "")">
                <div class="uptime-head"><h3>\(window.label)</h3><span class="ratio">\(ratio)</span><span class="muted">\(outages)</span></div>
                \(UptimeBar(segments: window.segments).svg(label: "\(window.label): \(ratio) up, \(outages)"))
                </li>
                """
        }
        return """
            <section class="card" aria-labelledby="uptime-heading">
            <h2 id="uptime-heading">Uptime</h2>
            <ul class="plain uptimes">\(HTML.joined(windows))</ul>
            </section>
            """
    }

    var transitionsSection: HTML {
        // Each cell names its column too: a phone shows a row as a card of labelled lines. The roles
        // are explicit because that card layout (`display: block`) makes browsers drop the table's.
        let columns = ["Time", "State", "Reason", "Fault", "Target"]
        let rows = (history?.transitions ?? []).prefix(Self.transitionLimit).map { transition -> HTML in
            let cells: [HTML] = [
                "<time datetime=\"\(transition.at)\">\(PageWords.time(transition.at))</time>",
                "<span>\(Icons.state) \(PageWords.state(transition.state))</span>",
                "\(PageWords.reason(transition.reason ?? transition.state))",
                "\(transition.fault.map(PageWords.fault) ?? "—")", "\(transition.target ?? "—")",
            ]
            return
                "<tr role=\"row\" data-state=\"\(transition.state)\">\(HTML.joined(zip(columns, cells).map { "<td role=\"cell\" data-label=\"\($0)\">\($1)</td>" as HTML }))</tr>"
        }
        let head = HTML.joined(columns.map { "<th role=\"columnheader\" scope=\"col\">\($0)</th>" as HTML })
        return """
            <section class="card" aria-labelledby="transitions-heading">
            <h2 id="transitions-heading">Last transitions</h2>
            <div class="scroll" tabindex="0" role="region" aria-labelledby="transitions-heading">
            <table id="transitions" role="table" aria-labelledby="transitions-heading">
            <thead role="rowgroup"><tr role="row">\(head)</tr></thead>
            <tbody role="rowgroup">\(HTML.joined(rows))</tbody>
            </table>
            </div>
            \(history == nil ? "<p class=\"muted\">Transitions seen while this page is open appear here.</p>" : "" as HTML)
            </section>
            """
    }
}

/// The icons that go with a state's word: each drawn once, the one that applies shown by the
/// nearest `data-state`, so the script switches a state by changing one attribute.
enum Icons {
    static let state: HTML = """
        <svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false">\
        <circle cx="12" cy="12" r="11"/>\
        <path class="when-up" d="M6.5 12.5l3.5 3.5 7.5-8"/>\
        <path class="when-down" d="M7.5 7.5l9 9M16.5 7.5l-9 9"/>\
        <path class="when-unknown" d="M9 9.5a3 3 0 1 1 4 2.8c-.8.4-1 .9-1 1.7M12 17.2v.1"/>\
        </svg>
        """
}
