import Foundation
import ReachTesting

/// One tab of a ``Chromium``, attached over the DevTools protocol (a flattened session).
package struct DevToolsPage: Sendable {
    package let browser: Chromium
    package let session: String

    /// Sends a command to this tab.
    @discardableResult
    package func send(_ method: String, _ parameters: [String: Any] = [:]) async throws -> Chromium.Result {
        try await browser.send(method, parameters, session: session)
    }

    /// Loads `url` and waits until the document has loaded (`readyState` is `complete`).
    package func navigate(_ url: String, timeout: Duration = .seconds(10)) async throws {
        try await send("Page.navigate", ["url": url])
        try await waitUntil("location.href !== 'about:blank' && document.readyState === 'complete'", timeout: timeout)
    }

    /// The value of a JavaScript expression (awaited when it is a promise), as JSON turns it into Swift.
    package func evaluate(_ expression: String) async throws -> Any? {
        let answer = try await send(
            "Runtime.evaluate",
            ["expression": expression, "returnByValue": true, "awaitPromise": true]
        )
        if let exception = answer.object["exceptionDetails"] {
            throw Chromium.Failed(description: "\(expression): \(exception)")
        }
        return (answer.object["result"] as? [String: Any])?["value"]
    }

    /// The text of the first element matching a CSS selector, or `nil` when there is none.
    package func text(_ selector: String) async throws -> String? {
        try await evaluate("document.querySelector(\(Self.quoted(selector)))?.textContent ?? null") as? String
    }

    /// Waits until a JavaScript expression is true; returns how long that took.
    @discardableResult
    package func waitUntil(
        _ condition: String,
        timeout: Duration = .seconds(10),
        every interval: Duration = .milliseconds(10)
    ) async throws -> Duration {
        let start = ContinuousClock.now
        do {
            // Each look is a round trip to the browser: every `interval`, not every millisecond.
            try await ReachTesting.waitUntil(condition, timeout: timeout, every: interval) {
                try await evaluate("Boolean(\(condition))") as? Bool == true
            }
        } catch is TimedOutWaiting {
            throw Chromium.Failed(description: "not true within \(timeout): \(condition)")
        }
        return ContinuousClock.now - start
    }

    /// A PNG of the whole page, or of its top `maxHeight` CSS pixels, written to `path`.
    package func screenshot(to path: String, maxHeight: Int? = nil) async throws {
        var parameters: [String: Any] = ["format": "png", "captureBeyondViewport": true]
        if let maxHeight,
            let size = try await evaluate(
                "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
            ) as? [Int]
        {
            parameters["clip"] = ["x": 0, "y": 0, "width": size[0], "height": min(size[1], maxHeight), "scale": 1]
        }
        let shot = try await send("Page.captureScreenshot", parameters)
        guard let base64 = shot.object["data"] as? String, let png = Data(base64Encoded: base64) else {
            throw Chromium.Failed(description: "no screenshot data")
        }
        try png.write(to: URL(filePath: path))
    }

    /// Emulates a viewport of `width`×`height` CSS pixels (a phone is about 390 wide) and the
    /// light or dark colour scheme.
    package func emulate(width: Int, height: Int, mobile: Bool = false, dark: Bool = false) async throws {
        try await send(
            "Emulation.setDeviceMetricsOverride",
            ["width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile]
        )
        try await send(
            "Emulation.setEmulatedMedia",
            ["features": [["name": "prefers-color-scheme", "value": dark ? "dark" : "light"]]]
        )
    }

    /// A string literal for JavaScript.
    package static func quoted(_ text: String) -> String {
        String(decoding: (try? JSONSerialization.data(withJSONObject: [text])) ?? Data("[\"\"]".utf8), as: UTF8.self)
            .dropFirst().dropLast().description
    }
}
