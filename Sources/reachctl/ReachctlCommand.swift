import ArgumentParser
import Foundation
import ReachCore

/// `reachctl`: asks a running reachd about connectivity.
@main
struct ReachctlCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reachctl",
        abstract: "Ask a running reachd whether this machine can reach its server.",
        discussion: """
            reachctl talks to reachd's status API (--endpoint, else $REACHD_ENDPOINT, else \
            http://127.0.0.1:9780). When reachd requires a bearer token, pass the file that holds \
            it with --token-file.

            Exit codes: 0 connected, 1 disconnected or unknown (wait-online: timed out), \
            2 reachd unreachable, 3 the event stream broke (watch without --follow).

            Shell completions: reachctl --generate-completion-script bash|zsh|fish. \
            Man pages, from the source tree: swift package generate-manual (or scripts/install).
            """,
        version: ReachVersion.current,
        subcommands: [Status.self, Watch.self, WaitOnline.self, Check.self, Reload.self, NotifyAgent.self])

    @Option(
        name: .long,
        help: ArgumentHelp("reachd's status API (default: $REACHD_ENDPOINT, else \(ReachdEndpoint.defaultURL)).", valueName: "url"))
    var endpoint: String?

    @Option(name: .customLong("token-file"), help: ArgumentHelp("Send the bearer token in this file.", valueName: "path"))
    var tokenFile: String?

    /// The endpoint and token the options and environment name; exits 2 when the token file cannot be read.
    func resolvedEndpoint() throws -> ReachdEndpoint {
        let url = endpoint ?? ProcessInfo.processInfo.environment["REACHD_ENDPOINT"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ReachdEndpoint.defaultURL
        var token: String?
        if let tokenFile {
            // A token is one line: read at most 64 KiB of it, so a wrong path cannot exhaust memory.
            let limit = 64 << 10
            guard let handle = FileHandle(forReadingAtPath: tokenFile),
                let data = try? handle.read(upToCount: limit + 1) ?? Data(), (try? handle.close()) != nil,
                let text = String(data: data, encoding: .utf8)
            else {
                Output.error("reachctl: cannot read the token file \(tokenFile)")
                throw ExitCode(ExitStatus.unreachable)
            }
            guard data.count <= limit else {
                Output.error("reachctl: the token file \(tokenFile) is larger than 64 KiB; it must hold one line with the token")
                throw ExitCode(ExitStatus.unreachable)
            }
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            // Not quoted back in any message: it is a secret.
            guard !trimmed.isEmpty, !trimmed.hasHeaderControlCharacter else {
                Output.error("reachctl: the token file \(tokenFile) must hold one line with the token")
                throw ExitCode(ExitStatus.unreachable)
            }
            token = trimmed
        }
        return ReachdEndpoint(base: url, token: token)
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the current verdict, its reason and every target.",
            discussion: "Exit status: 0 connected, 1 disconnected or unknown, 2 reachd unreachable.")

        @ParentCommand var root: ReachctlCommand

        @Flag(help: "Print the status document as reachd sent it (JSON).")
        var json = false

        func run() async throws {
            try await Summary.fetchAndReport(endpoint: root.resolvedEndpoint(), method: .GET, path: "/v1/status", json: json)
        }
    }

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make reachd probe every target now, then show the new verdict as status does.",
            discussion: "Exit status: 0 connected, 1 disconnected or unknown, 2 reachd unreachable.")

        @ParentCommand var root: ReachctlCommand

        @Flag(help: "Print the status document as reachd sent it (JSON).")
        var json = false

        func run() async throws {
            try await Summary.fetchAndReport(endpoint: root.resolvedEndpoint(), method: .POST, path: "/v1/check", json: json)
        }
    }
}

/// The exit statuses, shared by every subcommand.
enum ExitStatus {
    static let connected: Int32 = 0
    static let notConnected: Int32 = 1
    static let unreachable: Int32 = 2
    static let streamBroke: Int32 = 3
}

/// Unbuffered writes, so a pipe reader sees each line at once.
enum Output {
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}
