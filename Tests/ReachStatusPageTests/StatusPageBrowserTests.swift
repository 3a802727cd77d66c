import Foundation
import ReachAPI
import ReachCore
import ReachSupport
import ReachTestRigs
import ReachTesting
import Testing

/// The status page in a real headless Chromium, against a real reachd on loopback watching a real
/// loopback HTTP server (and an HTTPS one, for a certificate's expiry): what a person sees first,
/// how fast a failure and its restoration reach the page without a reload, the page without
/// JavaScript, its accessibility tree and contrast in both themes, and screenshots for the docs.
@Suite(
    "The status page in a real Chromium",
    .serialized,
    .timeLimit(.minutes(4)),
    .enabled(if: Chromium.executable != nil, "needs chromium (scripts/test installs it)")
)
struct StatusPageBrowserTests {
    /// The package's `.build/status-page`, where the screenshots go.
    static let screenshots = BuiltProducts.packageRoot.appending(path: ".build/status-page")

    /// A reachd with a token, one plain target and one TLS target, and a browser that took the token once.
    struct Rig {
        let directory: TemporaryDirectory
        let server: HealthServer
        let tls: LoopbackHTTPSServer
        let port: Int
        let config: URL
        let token = "page-token-\(UInt32.random(in: 0...UInt32.max))"

        /// - Parameter history: Whether reachd keeps history (in the test's directory); without it the page says it has none.
        static func start(_ label: String, history: Bool = true) async throws -> (Rig, ReachdProcess) {
            let directory = try TemporaryDirectory(label)
            let ca = try await PrivateCA.make(in: directory.path)
            let tls = try await LoopbackHTTPSServer(certificate: try await ca.issue(name: "api.test", days: 20))
            let server = try await HealthServer()
            let port = try freeLoopbackPort()
            let config = directory.url.appending(path: "reachd.yaml")
            let rig = Rig(directory: directory, server: server, tls: tls, port: port, config: config)
            let tokenFile = directory.url.appending(path: "token")
            try rig.token.write(to: tokenFile, atomically: true, encoding: .utf8)
            let historyLine =
                history ? "history: { path: \(directory.url.appending(path: "history.sqlite").path) }" : ""
            try """
            \(historyLine)
            api: { bearer_token_file: \(tokenFile.path) }
            probe: { interval: 200ms, timeout: 1s }
            policy: all
            targets:
              - { name: api, url: "\(server.url)" }
              - { name: secure-api, url: "\(tls.url)", tls: { ca_file: \(ca.certificate) } }
            """.write(to: config, atomically: true, encoding: .utf8)
            return (rig, try await rig.reachd())
        }

        func reachd() async throws -> ReachdProcess {
            let reachd = try ReachdProcess(["--config", config.path, "--listen", "127.0.0.1:\(port)"])
            _ = try await reachd.waitForLog(containing: "msg=\"connected: healthy\"")
            return reachd
        }

        var base: String { "http://127.0.0.1:\(port)" }
    }

    static func verdict(_ page: DevToolsPage) async throws -> String? {
        try await page.evaluate("document.getElementById('verdict').dataset.state") as? String
    }

    @Test func theFirstPaintShowsTheVerdictAndFailuresAndRestorationsArriveLiveWithinASecond() async throws {
        let (rig, reachd) = try await Rig.start("page-live")
        defer { reachd.signal(SIGTERM) }
        try await Chromium.with(directory: rig.directory) { browser in
            let page = try await browser.newPage()

            // The token once, in the address: the page keeps it in a cookie and drops it from the URL.
            try await page.navigate("\(rig.base)/?token=\(rig.token)")
            #expect(try await page.evaluate("location.href") as? String == "\(rig.base)/")
            #expect(try await page.text("#verdict-word") == "Connected")
            #expect(try await page.evaluate("document.cookie") as? String == "", "HttpOnly: no script reads the cookie")
            #expect(try await page.evaluate("fetch('/v1/status').then(r => r.status)") as? Int == 200)
            #expect(
                try await page.evaluate("fetch('/v1/check', {method: 'POST'}).then(r => r.status)") as? Int == 401,
                "the cookie never acts"
            )
            try await page.waitUntil("document.getElementById('live').dataset.state === 'live'")
            try await Self.shoot(page, "light", width: 1280, height: 900)
            let firstPaintInterfaces = try await page.evaluate(Self.shape("#interfaces")) as? String

            // A server failure, then its restoration, on the page without a reload.
            let marker = try await page.evaluate("window.reachdMarker = Math.random()") as? Double
            await rig.server.stop()
            let failure = try await page.waitUntil(
                "document.getElementById('verdict').dataset.state === 'disconnected'",
                timeout: .seconds(5)
            )
            let failureShown = try await page.evaluate(Self.sinceDecision) as? Int ?? -1
            print(
                "status page: the server's failure appeared \(Self.milliseconds(failure)) ms after it stopped answering, \(failureShown) ms after reachd decided"
            )
            #expect(failure < .seconds(1))
            #expect(try await page.text("#verdict-target") == "api")
            #expect(try await page.text("#verdict-fault") == FaultWords.sentence(Fault.server.code))
            #expect(try await page.text("#verdict-reason")?.contains("target api") == true)
            #expect(
                try await page.evaluate(Self.shape("#interfaces")) as? String == firstPaintInterfaces,
                "the script builds the server's markup"
            )
            try await Self.shoot(page, "dark", width: 1280, height: 900, dark: true)

            let restored = try await HealthServer(port: rig.server.port)
            defer { restored.kill() }
            let restoration = try await page.waitUntil(
                "document.getElementById('verdict').dataset.state === 'connected'",
                timeout: .seconds(5)
            )
            let restorationShown = try await page.evaluate(Self.sinceDecision) as? Int ?? -1
            print(
                "status page: the restoration appeared \(Self.milliseconds(restoration)) ms after the server answered again, \(restorationShown) ms after reachd decided"
            )
            #expect(restoration < .seconds(1))
            #expect(try await page.evaluate("window.reachdMarker") as? Double == marker, "no reload")
            #expect(
                try await page.evaluate("document.querySelectorAll('#transitions tbody tr').length") as? Int ?? 0 >= 2
            )
            try await page.waitUntil(
                "document.querySelector('[data-target=api] svg.chart polyline') !== null",
                timeout: .seconds(15)
            )
            try await page.emulate(width: 390, height: 844, mobile: true)
            #expect(
                try await page.evaluate("[document.documentElement.scrollWidth, innerWidth]") as? [Int] == [390, 390],
                "a phone's width"
            )

            // reachd away: the page says so, then follows the new run when it is back. The outage
            // is committed first (history writes once a second, and SIGKILL loses what it has not),
            // so that the uptime bars below have it to show.
            try await waitUntil("the outage is in the history", timeout: .seconds(5)) {
                (try? await page.evaluate("fetch('/v1/history').then(r => r.json()).then(d => d.outages.length)"))
                    as? Int ?? 0 > 0
            }
            reachd.signal(SIGKILL)
            try await page.waitUntil(
                "document.getElementById('live').dataset.state === 'reconnecting'",
                timeout: .seconds(5)
            )
            #expect(try await page.text("#live")?.hasPrefix("Reconnecting") == true)
            let again = try await rig.reachd()
            defer { again.signal(SIGTERM) }
            try await page.waitUntil("document.getElementById('live').dataset.state === 'live'", timeout: .seconds(15))
            #expect(try await page.evaluate("window.reachdMarker") as? Double == marker, "no reload")

            try await Self.expectUptimeBarsMatchTheHistory(page, base: rig.base)
        }
    }

    @Test func withoutJavaScriptThePageStillShowsTheVerdict() async throws {
        let (rig, reachd) = try await Rig.start("page-nojs", history: false)
        defer { reachd.signal(SIGTERM) }
        try await Chromium.with(directory: rig.directory) { browser in
            let page = try await browser.newPage()
            try await page.send("Emulation.setScriptExecutionDisabled", ["value": true])
            try await page.navigate("\(rig.base)/?token=\(rig.token)")
            #expect(try await page.text("#verdict-word") == "Connected")
            #expect(
                try await page.evaluate("document.getElementById('live').dataset.state") as? String == "static",
                "the script did not run"
            )
            #expect(try await page.evaluate("document.querySelectorAll('#targets > li').length") as? Int == 2)
            #expect(try await page.text("#no-history")?.hasPrefix("No history") == true)
        }
    }

    @Test func theAccessibilityTreeNamesTheKeyElementsAndTextKeepsAAContrastInBothThemes() async throws {
        let (rig, reachd) = try await Rig.start("page-a11y")
        defer { reachd.signal(SIGTERM) }
        try await Chromium.with(directory: rig.directory) { browser in
            let page = try await browser.newPage()
            try await page.navigate("\(rig.base)/?token=\(rig.token)")

            try await page.send("Accessibility.enable")
            let tree = try await page.send("Accessibility.getFullAXTree")
            let nodes = (tree.object["nodes"] as? [[String: Any]] ?? []).compactMap {
                node -> (role: String, name: String)? in
                guard let role = (node["role"] as? [String: Any])?["value"] as? String else { return nil }
                return (role, (node["name"] as? [String: Any])?["value"] as? String ?? "")
            }
            for (role, name) in [
                ("heading", "reachd status"), ("region", "Verdict"), ("status", ""), ("heading", "Targets"),
                ("link", "Skip to the targets"),
                ("image", "Latency of api over the last minutes"), ("heading", "Last transitions"),
                ("table", "Last transitions"),
            ] {
                #expect(
                    nodes.contains { $0.role == role && ($0.name == name || name.isEmpty) },
                    "\(role) \"\(name)\" in \(nodes.filter { !$0.name.isEmpty })"
                )
            }
            // Keyboard: the first Tab reaches the skip link.
            try await page.send(
                "Input.dispatchKeyEvent",
                ["type": "keyDown", "key": "Tab", "code": "Tab", "windowsVirtualKeyCode": 9]
            )
            try await page.send(
                "Input.dispatchKeyEvent",
                ["type": "keyUp", "key": "Tab", "code": "Tab", "windowsVirtualKeyCode": 9]
            )
            #expect(try await page.evaluate("document.activeElement.textContent") as? String == "Skip to the targets")

            for dark in [false, true] {
                try await page.emulate(width: 1280, height: 900, dark: dark)
                let worst = try #require(try await page.evaluate(Self.contrastScript) as? [String: Any])
                let ratio = worst["ratio"] as? Double ?? 0
                print(
                    "status page: lowest text contrast \(dark ? "dark" : "light"): \((ratio * 100).rounded() / 100):1 (\(worst["text"] ?? ""))"
                )
                #expect(ratio >= 4.5, "\(dark ? "dark" : "light"): \(worst)")
            }
        }
    }

    /// A fresh page's uptime bars, which include an outage, against `GET /v1/history` over the same
    /// windows, ending at the time the page was rendered. The page computes from the document's times, which are whole
    /// milliseconds, and the history from its exact ones: each edge of an outage or gap may move by
    /// up to a millisecond, which in the few seconds this test records moves the ratio by ~1e-4.
    static func expectUptimeBarsMatchTheHistory(_ page: DevToolsPage, base: String) async throws {
        try await page.navigate("\(base)/")
        let rendered = try #require(
            try await page.evaluate("JSON.parse(document.getElementById('page-data').textContent).now") as? Double
        )
        let until = RFC3339.string(from: WallTime(sinceEpoch: .milliseconds(Int64(rendered * 1000))))
        let windows = try #require(
            try await page.evaluate(
                "[...document.querySelectorAll('li.uptime')].map(li => [li.dataset.window, li.dataset.ratio])"
            ) as? [[String]]
        )
        for (label, days) in [("24 h", 1), ("7 d", 7), ("30 d", 30), ("90 d", 90)] {
            let since = RFC3339.string(
                from: WallTime(sinceEpoch: .milliseconds(Int64(rendered * 1000)) - .seconds(days * 86_400))
            )
            let url = "/v1/history?since=\(percentEncodedQueryValue(since))&until=\(percentEncodedQueryValue(until))"
            let answer = try #require(
                try await page.evaluate(
                    """
                    fetch(\(DevToolsPage.quoted(url))).then(async (r) => {
                      if (r.status !== 200) return [r.status, null, 0, 0];
                      const d = await r.json(), known = d.uptime.connected_seconds + d.uptime.disconnected_seconds;
                      return [r.status, d.uptime.ratio, known, d.outages.length + d.gaps.length];
                    })
                    """
                ) as? [Any]
            )
            try #require(answer.first as? Int == 200, "reachd keeps history here: \(answer)")
            let shown = try #require(windows.first { $0.first == label }, "the \(label) bar in \(windows)")
            let expected = answer[1] as? Double
            let (known, spans) = (answer[2] as? Double ?? 0, answer[3] as? Int ?? 0)
            let tolerance = Double(2 * spans + 1) * 0.001 / max(known, 0.001)
            print(
                "status page: uptime \(label): page \(shown.last ?? "-"), /v1/history \(expected.map { "\($0)" } ?? "null") (±\(tolerance))"
            )
            #expect(
                abs((Double(shown.last ?? "") ?? -1) - (expected ?? -1)) <= tolerance,
                "\(label): page \(shown), history \(answer), tolerance \(tolerance)"
            )
            #expect((expected ?? 1) < 1, "\(label): the outage counts against the uptime: \(answer)")
        }
    }

    /// The lowest contrast of any visible text against the background behind it, from computed styles (WCAG 2 formula).
    static let contrastScript = """
        (() => {
          const parse = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
          const luminance = ([r, g, b]) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
            return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
          const background = (el) => { for (; el; el = el.parentElement) { const c = parse(getComputedStyle(el).backgroundColor);
            if (c.length === 3 || c[3] > 0) return c.slice(0, 3); } return [255, 255, 255]; };
          let worst = { ratio: 99, text: "" };
          for (const el of document.querySelectorAll("body *")) {
            const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
            if (!own || !el.getClientRects().length || getComputedStyle(el).visibility === "hidden") continue;
            const [a, b] = [luminance(parse(getComputedStyle(el).color)), luminance(background(el))];
            const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
            if (ratio < worst.ratio) worst = { ratio, text: el.textContent.trim().slice(0, 60), color: getComputedStyle(el).color, background: background(el).join(",") };
          }
          return worst;
        })()
        """

    /// An element's markup without the whitespace between tags and with attributes sorted: what the
    /// server renders and what the script builds compare equal when they are the same.
    static func shape(_ selector: String) -> String {
        """
        (() => {
          const shape = (n) => n.nodeType === 3 ? (n.textContent.trim() ? JSON.stringify(n.textContent.trim()) : "")
            : n.nodeType !== 1 ? "" : `<${n.localName}${[...n.attributes].map((a) => ` ${a.name}=${JSON.stringify(a.value)}`).sort().join("")}>`
              + [...n.childNodes].map(shape).join("") + `</${n.localName}>`;
          return shape(document.querySelector(\(DevToolsPage.quoted(selector))));
        })()
        """
    }

    /// Milliseconds from the shown verdict's `since` (when reachd decided it) to now, on the same machine's clock.
    static let sinceDecision = "Date.now() - Date.parse(document.getElementById('verdict-since').dateTime)"

    static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }

    static func shoot(
        _ page: DevToolsPage,
        _ name: String,
        width: Int,
        height: Int,
        mobile: Bool = false,
        dark: Bool = false,
        maxHeight: Int? = nil
    ) async throws {
        try await page.emulate(width: width, height: height, mobile: mobile, dark: dark)
        try FileManager.default.createDirectory(at: screenshots, withIntermediateDirectories: true)
        let path = screenshots.appending(path: "\(name).png").path
        try await page.screenshot(to: path, maxHeight: maxHeight)
        print("status page: screenshot \(path)")
    }
}
