import Foundation
import ReachCore
import ReachStatusPage
import ReachSupport
import ReachTestRigs
import ReachTesting
import Testing

@testable import ReachAPI

/// The page as a phone shows it, from a document with everything that makes a page wide: several
/// targets with long names and failures that quote long URLs, two uplinks, degraded families and
/// fifty transitions. reachd's own renderer writes it; a loopback server serves it with the page's
/// Content-Security-Policy and one verdict event, so the script runs and rebuilds what it updates.
extension StatusPageBrowserTests {
    @Test func onAPhoneNothingScrollsSidewaysAndTheScriptRebuildsTheServersMarkup() async throws {
        let directory = try TemporaryDirectory("page-phone")
        let page = PhonePage.rendered()
        let server = try await PhonePage.serve(page, in: directory)
        defer { server.child.signal(SIGKILL) }
        try await Chromium.with(directory: directory) { browser in
            let tab = try await browser.newPage()
            try await tab.emulate(width: 390, height: 844, mobile: true)
            try await tab.navigate("http://127.0.0.1:\(server.port)/")
            let firstPaint = try #require(try await tab.evaluate(Self.shape("#interfaces")) as? String)
            try await tab.waitUntil("document.getElementById('sequence').textContent === '\(page.event.sequence)'")
            #expect(
                try await tab.evaluate(Self.shape("#interfaces")) as? String == firstPaint,
                "the script builds the server's markup"
            )
            #expect(try await tab.evaluate("document.querySelectorAll('#interfaces > li').length") as? Int == 2)
            #expect(try await tab.text("#verdict-families") == "IPv6")
            #expect(
                try await tab.evaluate("document.querySelectorAll('#transitions tbody tr').length") as? Int
                    == StatusPage.transitionLimit
            )
            // Phones in both themes, and a small tablet, where the transitions are a table again.
            for (width, dark) in [(390, false), (320, false), (390, true), (320, true), (768, false)] {
                try await tab.emulate(width: width, height: 844, mobile: true, dark: dark)
                let widths = try #require(try await tab.evaluate(Self.overflow(width)) as? [String: Any])
                print(
                    "status page: at \(width) px (\(dark ? "dark" : "light")) the page is \(widths["scrollWidth"] ?? "?") px wide"
                )
                // A phone widens the layout to fit what is too wide and zooms out: innerWidth grows with the page.
                #expect(
                    widths["scrollWidth"] as? Int ?? .max <= width && widths["innerWidth"] as? Int == width,
                    "\(width) px: \(widths)"
                )
                let worst = try #require(try await tab.evaluate(Self.contrastScript) as? [String: Any])
                let ratio = worst["ratio"] as? Double ?? 0
                print(
                    "status page: lowest text contrast at \(width) px (\(dark ? "dark" : "light")): \((ratio * 100).rounded() / 100):1"
                )
                #expect(ratio >= 4.5, "\(width) px, \(dark ? "dark" : "light"): \(worst)")
            }
            // As cards, the transitions are still a table to a screen reader: rows of cells under
            // column headers, and a cell's name is its content, not the label drawn before it.
            try await tab.emulate(width: 390, height: 844, mobile: true)
            #expect(
                try await tab.evaluate("getComputedStyle(document.querySelector('#transitions tr')).display") as? String
                    == "block",
                "the card layout"
            )
            let table = try await Self.accessibleTable(tab, named: "Last transitions")
            #expect(table.rows == StatusPage.transitionLimit + 1, "\(table)")
            #expect(table.columnHeaders == ["Time", "State", "Reason", "Fault", "Target"], "\(table)")
            #expect(table.cells == StatusPage.transitionLimit * 5, "\(table)")
            #expect(
                table.firstCellNames.count == 5
                    && !table.firstCellNames.contains {
                        $0.hasPrefix("Time") || $0.hasPrefix("State") || $0.hasPrefix("Reason")
                    },
                "\(table)"
            )
            _ = try await tab.evaluate("scrollTo(0, 0)")
            try await Self.shoot(tab, "phone", width: 390, height: 844, mobile: true, maxHeight: 2600)
        }
    }

    /// What the accessibility tree makes of the table named `name`: its rows, column headers, cells,
    /// and the names of its first row's cells.
    static func accessibleTable(
        _ tab: DevToolsPage,
        named name: String
    ) async throws
        -> (rows: Int, columnHeaders: [String], cells: Int, firstCellNames: [String])
    {
        try await tab.send("Accessibility.enable")
        let nodes = try await tab.send("Accessibility.getFullAXTree").object["nodes"] as? [[String: Any]] ?? []
        func value(_ node: [String: Any], _ key: String) -> String {
            (node[key] as? [String: Any])?["value"] as? String ?? ""
        }
        let byID = Dictionary(nodes.compactMap { node in (node["nodeId"] as? String).map { ($0, node) } }) { first, _ in
            first
        }
        func children(_ node: [String: Any]) -> [[String: Any]] {
            (node["childIds"] as? [String] ?? []).compactMap { byID[$0] }
        }
        func descendants(_ node: [String: Any], role: String) -> [[String: Any]] {
            children(node).flatMap { child in
                (value(child, "role") == role ? [child] : []) + descendants(child, role: role)
            }
        }
        guard let table = nodes.first(where: { value($0, "role") == "table" && value($0, "name") == name }) else {
            return (0, [], 0, [])
        }
        let rows = descendants(table, role: "row")
        let firstBodyRow = rows.first { !descendants($0, role: "cell").isEmpty }
        return (
            rows.count, descendants(table, role: "columnheader").map { value($0, "name") },
            descendants(table, role: "cell").count,
            firstBodyRow.map { descendants($0, role: "cell").map { value($0, "name") } } ?? []
        )
    }

    /// The page's width, the viewport's, and the first elements that reach past `width`, for the failure message.
    static func overflow(_ width: Int) -> String {
        """
        (() => {
          const wide = [...document.querySelectorAll("body *:not(svg *)")].filter((el) => el.getBoundingClientRect().right > \(width) + 0.5)
            .slice(0, 8).map((el) => `${el.localName}.${el.className.baseVal ?? el.className} ${Math.round(el.getBoundingClientRect().right)}`);
          return { scrollWidth: document.documentElement.scrollWidth, innerWidth, wide };
        })()
        """
    }
}

/// A page as wide as a real one gets, and the loopback server that serves it.
enum PhonePage {
    struct Rendered {
        var html: String
        /// The verdict event the server sends: the same document, one sequence later.
        var event: StatusDocument
    }

    /// The browser's clock draws the charts and counts the certificate's days, so the page is rendered now.
    static let now = WallTime(sinceEpoch: .seconds(Int64(Date().timeIntervalSince1970)))

    static func rendered() -> Rendered {
        let long = "payments-gateway.eu-west-1.internal.example.com"
        func ago(_ seconds: Int) -> String { RFC3339.string(from: now.advanced(by: .seconds(-seconds))) }
        let targets: [StatusDocument.Target] = [
            .init(name: "api", kind: "http", health: "healthy", latencySeconds: 0.012, lastCheckedAt: ago(1)),
            .init(
                name: long,
                kind: "http",
                health: "unhealthy",
                reason: "http_status",
                detail:
                    "GET https://\(long)/api/v1/health/deep?include=database,cache,queue&timeout=5s answered 503 Service Unavailable",
                httpStatus: 503,
                latencySeconds: 0.245,
                lastCheckedAt: ago(1),
                consecutiveFailures: 12
            ),
            .init(
                name: "secure-api",
                kind: "http",
                health: "healthy",
                latencySeconds: 0.031,
                lastCheckedAt: ago(2),
                certificate: .init(
                    notAfter: ago(-20 * 86_400),
                    subject: "CN=secure-api.example.com",
                    issuer: "CN=Example Internal CA"
                )
            ),
            .init(
                name: "grpc-backend.service.consul",
                kind: "grpc",
                health: "healthy",
                latencySeconds: 0.004,
                families: ["ipv4", "ipv6"],
                answeredFamilies: ["ipv4"],
                degradedFamilies: ["ipv6"]
            ),
            .init(
                name: "tcp://database-primary.eu-west-1.rds.amazonaws.example.com:5432",
                kind: "tcp",
                health: "unknown"
            ),
        ]
        let status = StatusDocument(
            state: "disconnected",
            reason: "http_status",
            reasonDetail: "target \(long): unexpected HTTP status 503",
            target: long,
            fault: "server",
            since: ago(125),
            likelyConnected: false,
            sequence: 41,
            usableInterfaces: ["eth0", "wlan0"],
            targets: targets,
            interfaces: [
                .init(name: "eth0", reachable: false, reason: "http_status", fault: "server"),
                .init(name: "wlan0", reachable: true, latencySeconds: 0.034),
            ],
            degradedFamilies: ["ipv6"]
        )
        let transitions = (0..<60).map { index in
            index % 2 == 0
                ? PageHistory.Transition(
                    at: ago(125 + index * 600),
                    state: "disconnected",
                    reason: "http_status",
                    fault: index % 4 == 0 ? "server" : "upstream",
                    target: long
                )
                : PageHistory.Transition(at: ago(125 + index * 600), state: "connected", reason: "healthy")
        }
        let uptime = [("24 h", 24), ("7 d", 28), ("30 d", 30), ("90 d", 90)].map { label, count in
            PageHistory.Uptime(
                label: label,
                ratio: 0.9931,
                segments: (0..<count).map { $0 % 7 == 3 ? 0.97 : $0 == 0 ? nil : 1 },
                outages: 30
            )
        }
        let latency = [
            "api": (0..<10).map {
                PageHistory.LatencyPoint(
                    epochSeconds: now.secondsSinceEpoch - Double(600 - $0 * 60),
                    seconds: 0.01 + Double($0 % 3) / 1000
                )
            }
        ]
        var event = status
        event.sequence += 1
        return Rendered(
            html: StatusPage(
                status: status,
                history: PageHistory(transitions: transitions, uptime: uptime, latency: latency),
                now: now
            ).html,
            event: event
        )
    }

    /// Serves the page at `/`, its assets, and on `/v1/events` the one event, then an open stream.
    static func serve(
        _ page: Rendered,
        in directory: TemporaryDirectory
    ) async throws -> (port: Int, child: ChildProcess) {
        let root = directory.url.appending(path: "site")
        let files = [
            ("index.html", Data(page.html.utf8)), ("style.css", Data(StatusPageAssets.style.utf8)),
            ("script.js", Data(StatusPageAssets.script.utf8)), ("events", page.event.eventFrame),
        ]
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        for (name, data) in files { try data.write(to: root.appending(path: name)) }
        let script = """
            import http.server, os, sys, time
            root, style, script, policy = sys.argv[1:5]
            files = {'/': ('index.html', 'text/html; charset=utf-8'), style: ('style.css', 'text/css'),
                     script: ('script.js', 'text/javascript'), '/v1/events': ('events', 'text/event-stream')}
            class H(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    name, kind = files.get(self.path.split('?')[0], (None, None))
                    if name is None:
                        self.send_error(404)
                        return
                    body = open(os.path.join(root, name), 'rb').read()
                    self.send_response(200)
                    self.send_header('Content-Type', kind)
                    self.send_header('Content-Security-Policy', policy)
                    if kind != 'text/event-stream':
                        self.send_header('Content-Length', str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    self.wfile.flush()
                    if kind == 'text/event-stream':
                        time.sleep(3600)
                def log_message(self, *args):
                    pass
            s = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)
            print('port', s.server_address[1], flush=True)
            s.serve_forever()
            """
        let child = try ChildProcess(
            "page-server",
            executable: "/usr/bin/python3",
            arguments: [
                "-c", script, root.path, StatusPageAssets.stylePath, StatusPageAssets.scriptPath,
                StatusPageAssets.contentSecurityPolicy,
            ]
        )
        let line = try await child.waitForLine { $0.hasPrefix("port ") }
        return (Int(line.dropFirst("port ".count)) ?? 0, child)
    }
}
