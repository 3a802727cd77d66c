import Foundation
import ReachTesting

/// An `xdg-open` of a test's own: a script in a directory of its own, put first on `PATH`, that
/// records each URL it is asked to open and exits with a chosen status instead of starting a browser.
package final class XDGOpenStandIn: Sendable {
    private let directory: TemporaryDirectory

    /// - Parameter exitStatus: What the script exits with (xdg-open's 4: "the action failed").
    package init(exitStatus: Int32 = 0) async throws {
        directory = try TemporaryDirectory("xdg-open")
        let script = "\(directory)/xdg-open"
        try await writeExecutable(
            """
            #!/bin/sh
            printf '%s\\n' "$*" >> '\(directory)/opened'
            exit \(exitStatus)
            """,
            to: script
        )
    }

    /// A `PATH` that finds this `xdg-open` first, then the system's programs.
    package var searchPath: String { "\(directory):/usr/local/bin:/usr/bin:/bin" }

    /// Every URL it was asked to open, in order.
    package var opened: [String] {
        ((try? String(contentsOfFile: "\(directory)/opened", encoding: .utf8)) ?? "").split(separator: "\n").map(
            String.init
        )
    }
}
