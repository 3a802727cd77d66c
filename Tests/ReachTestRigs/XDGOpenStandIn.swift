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
            for fd in /proc/$$/fd/*; do readlink "$fd"; done >> '\(directory)/descriptors'
            exit \(exitStatus)
            """,
            to: script
        )
    }

    /// A `PATH` that finds this `xdg-open` first, then the system's programs.
    package var searchPath: String { "\(directory):/usr/local/bin:/usr/bin:/bin" }

    /// What its descriptors were open on (`pipe:[inode]`, a path), every run's together.
    package var descriptors: [String] { lines(of: "descriptors") }

    /// Every URL it was asked to open, in order.
    package var opened: [String] { lines(of: "opened") }

    private func lines(of file: String) -> [String] {
        ((try? String(contentsOfFile: "\(directory)/\(file)", encoding: .utf8)) ?? "").split(separator: "\n").map(
            String.init
        )
    }
}
