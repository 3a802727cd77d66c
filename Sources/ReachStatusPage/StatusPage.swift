import ReachAPI
import ReachCore
import ReachSupport

/// reachd's status page: the verdict, each target and interface, the recent transitions and uptime,
/// rendered as one HTML document from the documents the API serves.
///
/// Pure: a status document, the history (when reachd keeps one) and the time in, HTML out. The
/// server renders it when a browser asks for `/` and at no other time, so the page costs the daemon
/// nothing while nobody looks. The first paint is complete without JavaScript; the script
/// (``StatusPageAssets/script``) then follows `/v1/events` and keeps the same elements current.
///
/// ```swift
/// let html = StatusPage(status: document, history: nil, now: clock.wallTime).html
/// ```
package struct StatusPage: Sendable {
    /// The most transitions the page lists.
    package static let transitionLimit = 50

    package var status: StatusDocument
    package var history: PageHistory?
    package var now: WallTime

    package init(status: StatusDocument, history: PageHistory?, now: WallTime) {
        self.status = status
        self.history = history
        self.now = now
    }

    /// The whole document.
    package var html: String {
        let word = PageWords.state(status.state)
        let page: HTML = """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="color-scheme" content="light dark">
            <title>\(word) · reachd</title>
            <link rel="stylesheet" href="\(StatusPageAssets.stylePath)">
            <script src="\(StatusPageAssets.scriptPath)" defer></script>
            </head>
            <body>
            <a class="skip" href="#targets-heading">Skip to the targets</a>
            <header class="bar">
            <h1>reachd status</h1>
            <p id="live" class="live" data-state="static">Showing the state when this page loaded; reload for a newer one.</p>
            </header>
            <main>
            \(verdictSection)
            \(targetsSection)
            \(interfacesSection)
            \(uptimeSection)
            \(transitionsSection)
            </main>
            <footer class="bar"><p>reachd \(status.version) · event <span id="sequence">\(status.sequence)</span> · rendered \(PageWords.time(RFC3339.string(from: now)))</p></footer>
            <script type="application/json" id="page-data">\(HTML(stringLiteral: pageData))</script>
            </body>
            </html>

            """
        return page.markup
    }

    /// What the script starts from: the words table, the verdict's facts, the document the page was
    /// rendered from, the render time and each target's recent latency as `[epoch seconds, seconds]` pairs.
    private struct PageData: Encodable {
        let words: [String: [String: String]]
        let facts: [Fact]
        let status: StatusDocument
        let now: Double
        let latency: [String: [[Double]]]
    }

    /// A ``ReachAPI/VerdictFact`` as the script reads it: which key of each event fills which element, in which words.
    private struct Fact: Encodable {
        let key: String
        let id: String
        let words: [String: String]
    }

    /// ``PageData`` in the API's JSON, safe inside the page's `<script type="application/json">`.
    private var pageData: String {
        let latency = (history?.latency ?? [:]).mapValues { $0.map { [$0.epochSeconds, $0.seconds] } }
        let data = PageData(
            words: PageWords.table,
            facts: StatusDocument.facts.map { Fact(key: $0.key, id: $0.id, words: $0.words) },
            status: status,
            now: now.secondsSinceEpoch,
            latency: latency
        )
        return PageWords.scriptSafe(String(decoding: APIJSON.encode(data), as: UTF8.self))
    }

    private var verdictSection: HTML {
        let since = RFC3339.wallTime(from: status.since)
        let lasted = since.map { PageWords.span(seconds: now.secondsSinceEpoch - $0.secondsSinceEpoch) } ?? ""
        return """
            <section id="verdict" class="verdict" data-state="\(status.state)" aria-labelledby="verdict-heading">
            <h2 id="verdict-heading" class="visually-hidden">Verdict</h2>
            <div class="verdict-line" role="status" aria-live="polite" aria-atomic="true">
            \(Icons.state)
            <p class="verdict-word" id="verdict-word">\(PageWords.state(status.state))</p>
            <p class="verdict-reason" id="verdict-reason">\(status.reasonDetail)</p>
            </div>
            <p class="since">Since <time id="verdict-since" datetime="\(status.since)">\(PageWords.time(status.since))</time> (<span id="verdict-for">\(lasted)</span>)</p>
            <dl class="facts">
            \(HTML.joined(status.factValues.map(factRow), separator: "\n"))
            </dl>
            </section>
            """
    }

    /// One fact's line of the verdict card; hidden while the document has no value for it.
    private func factRow(_ fact: VerdictFact, _ codes: [String]) -> HTML {
        let hidden: HTML = codes.isEmpty ? " hidden" : ""
        return """
            <div id="verdict-\(fact.id)-row"\(hidden)><dt>\(fact.label)</dt><dd id="verdict-\(fact.id)">\(fact.text(codes))</dd></div>
            """
    }
}
