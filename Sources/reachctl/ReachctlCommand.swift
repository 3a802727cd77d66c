import ArgumentParser
import Foundation
import ReachCore

/// `reachctl`: asks a running reachd about connectivity.
@main
struct ReachctlCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reachctl",
        abstract: "Ask a running reachd whether this machine can reach its server.",
        version: ReachVersion.current,
        subcommands: [Status.self])

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the current verdict and its reason.")

        func run() throws {
            FileHandle.standardError.write(Data("reachctl status: needs reachd's status endpoint, which this version of reachd does not serve yet.\n".utf8))
            throw ExitCode(2)
        }
    }
}
