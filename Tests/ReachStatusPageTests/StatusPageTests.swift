import ReachCore
import ReachStatusPage
import ReachSupport
import Testing

@testable import ReachAPI

@Suite("The status page's HTML")
struct StatusPageTests {
    private static let now = WallTime(sinceEpoch: .seconds(1_900_000_000))

    private static func document(state: String = "disconnected", target: String = "api") -> StatusDocument {
        StatusDocument(
            state: state,
            reason: "connection_refused",
            reasonDetail: "target \(target): the connection was refused",
            target: target,
            fault: state == "disconnected" ? "server" : nil,
            since: RFC3339.string(from: now.advanced(by: .seconds(-125))),
            likelyConnected: false,
            sequence: 7,
            usableInterfaces: ["eth0"],
            targets: [
                .init(
                    name: target,
                    kind: "http",
                    health: "unhealthy",
                    reason: "connection_refused",
                    latencySeconds: 0.012
                )
            ]
        )
    }

    @Test func theVerdictIsWordIconAndReasonWithSinceFaultAndTarget() {
        let html = StatusPage(status: Self.document(), history: nil, now: Self.now).html
        #expect(html.contains(#"<section id="verdict" class="verdict" data-state="disconnected""#))
        #expect(html.contains(#"<p class="verdict-word" id="verdict-word">Disconnected</p>"#))
        #expect(html.contains(#"aria-live="polite""#))
        #expect(html.contains(#"<svg class="icon""#))
        #expect(html.contains("target api: the connection was refused"))
        #expect(html.contains("(<span id=\"verdict-for\">2 min</span>)"))
        #expect(html.contains(#"<dd id="verdict-fault">The server is not responding — your network is fine.</dd>"#))
        #expect(html.contains(#"<dd id="verdict-target">api</dd>"#))
        #expect(html.contains(#"<dd class="latency">12 ms</dd>"#))
        #expect(html.contains("No history: this reachd keeps none"))
    }

    @Test func theFirstPaintShowsEachUplinksReachabilityAndTheDegradedFamilies() {
        var status = Self.document(state: "connected")
        status.usableInterfaces = ["eth0", "wlan0", "docker0"]
        status.interfaces = [
            .init(name: "eth0", reachable: true, latencySeconds: 0.008),
            .init(name: "wlan0", reachable: false, reason: "timeout", fault: "upstream"),
            .init(name: "wwan0"),
        ]
        status.degradedFamilies = ["ipv6"]
        status.targets[0].degradedFamilies = ["ipv6"]
        let html = StatusPage(status: status, history: nil, now: Self.now).html
        let interfaces = html.split(separator: #"<ul id="interfaces" class="plain">"#)[1].split(separator: "</ul>")[0]
        let lines = interfaces.split(separator: "</li>").map(String.init).filter { $0.contains("<li") }
        #expect(lines.count == 4, "the three uplinks, then docker0: \(interfaces)")
        #expect(lines[0].contains(#"<li class="interface" data-interface="eth0" data-state="healthy">"#))
        #expect(lines[0].contains(#"<span class="interface-word">Reaches the targets</span>"#))
        #expect(lines[0].contains(#"<div class="latency-row"><dt>Latency</dt><dd class="latency">8 ms</dd></div>"#))
        #expect(lines[0].contains(#"<div class="fault-row" hidden>"#))
        #expect(lines[1].contains(#"data-interface="wlan0" data-state="unhealthy""#))
        #expect(lines[1].contains(#"<span class="interface-word">Does not reach the targets</span>"#))
        #expect(lines[1].contains(#"<div class="reason-row"><dt>Why</dt><dd class="reason">timed out</dd></div>"#))
        #expect(
            lines[1].contains(
                #"<div class="fault-row"><dt>Fault</dt><dd class="fault">The internet connection is down.</dd></div>"#
            )
        )
        #expect(lines[1].contains(#"<div class="latency-row" hidden>"#))
        #expect(
            lines[2].contains(#"data-interface="wwan0" data-state="unknown""#) && lines[2].contains("Not yet known")
        )
        #expect(lines[3].contains(#"data-interface="docker0" data-state="usable""#) && lines[3].contains("Usable link"))
        #expect(html.contains(#"<p id="interfaces-none" class="muted" hidden>"#))
        #expect(
            html.contains(
                #"<div id="verdict-families-row"><dt>Degraded address family</dt><dd id="verdict-families">IPv6</dd></div>"#
            )
        )
        #expect(
            html.contains(
                #"<div class="families-row"><dt>Degraded address family</dt><dd class="families">IPv6</dd></div>"#
            )
        )

        let plain = StatusPage(status: Self.document(), history: nil, now: Self.now).html
        #expect(
            plain.contains(#"<div id="verdict-families-row" hidden>"#)
                && plain.contains(#"<div class="families-row" hidden>"#)
        )
        #expect(plain.contains(#"<li class="interface" data-interface="eth0" data-state="usable">"#))
    }

    @Test func everyFaultReadsAsReachctlAndTheNotificationSayIt() throws {
        let html = StatusPage(status: Self.document(), history: nil, now: Self.now).html
        let data = try #require(html.split(separator: #"<script type="application/json" id="page-data">"#).last)
        for fault in Fault.allCases {
            let sentence = try #require(FaultWords.sentence(fault.code))
            #expect(data.contains("\"\(fault.code)\":\"\(sentence)\""), "the script's words for \(fault.code)")
        }
    }

    @Test func textFromTheDocumentIsEscapedEverywhere() {
        let hostile = #"<script>alert("x")</script>&'"#
        let html = StatusPage(status: Self.document(target: hostile), history: nil, now: Self.now).html
        #expect(!html.contains("<script>alert"))
        #expect(html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;"))
        // In the embedded JSON `<` is \u003c, so the data element cannot be closed early.
        let data = html.split(separator: #"<script type="application/json" id="page-data">"#)[1]
        #expect(data.prefix { $0 != "\n" }.filter { $0 == "<" }.count == 1, "only the closing tag's `<`")
    }

    @Test func historyGivesUptimeBarsAndAtMostFiftyTransitions() {
        let transitions = (0..<60).map { index in
            PageHistory.Transition(
                at: RFC3339.string(from: Self.now.advanced(by: .seconds(-index * 60))),
                state: index % 2 == 0 ? "connected" : "disconnected",
                reason: "healthy"
            )
        }
        let uptime = [PageHistory.Uptime(label: "24 h", ratio: 0.99987, segments: [1, 0.5, nil], outages: 1)]
        let html = StatusPage(
            status: Self.document(state: "connected"),
            history: PageHistory(transitions: transitions, uptime: uptime),
            now: Self.now
        ).html
        #expect(html.split(separator: "<tr role=\"row\" data-state=").count - 1 == StatusPage.transitionLimit)
        // Each cell names its column, which a phone shows beside it when a row becomes a card.
        #expect(
            html.contains(
                #"<thead role="rowgroup"><tr role="row"><th role="columnheader" scope="col">Time</th><th role="columnheader" scope="col">State</th>"#
            )
        )
        #expect(
            html.contains(#"<tr role="row" data-state="connected"><td role="cell" data-label="Time"><time datetime=""#)
        )
        #expect(
            html.contains(
                #"<td role="cell" data-label="Reason">the targets answer as the policy requires</td><td role="cell" data-label="Fault">—</td><td role="cell" data-label="Target">—</td></tr>"#
            )
        )
        #expect(html.contains(#"data-window="24 h" data-ratio="0.99987""#))
        #expect(html.contains(#"<span class="ratio">99.98 %</span>"#))
        #expect(html.contains(#"aria-label="24 h: 99.98 % up, 1 outage""#))
        #expect(
            html.contains(#"class="seg up""#) && html.contains(#"class="seg down""#)
                && html.contains(#"class="seg none""#)
        )
        #expect(!html.contains("No history"))
    }

    @Test func escapingIsWrittenOnce() {
        #expect(HTML.escape(#"a<b>&"c'"#) == "a&lt;b&gt;&amp;&quot;c&#39;")
        let name = "<b>"
        let markup: HTML = "<p>\(name)</p>"
        #expect(markup.markup == "<p>&lt;b&gt;</p>")
    }
}
