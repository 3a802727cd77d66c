import ArgumentParser
import FoundationEssentials
import Glibc
import ReachClient
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
            it with --token-file. For a reachd serving HTTPS (--web.config.file), give an https:// \
            endpoint, --cacert for a private CA, and --user with --password-file for basic auth.

            Exit codes: 0 connected, 1 disconnected or unknown (wait-online: timed out), \
            2 reachd unreachable, 3 the event stream broke (watch without --follow).

            Shell completions: reachctl --generate-completion-script bash|zsh|fish. \
            Man pages: reachctl(1), reachd(8), reachd.yaml(5) (scripts/install or the Debian package).
            """,
        version: ReachVersion.current,
        subcommands: [
            Status.self, Watch.self, WaitOnline.self, Check.self, History.self, Reload.self, NotifyAgent.self,
        ]
    )

    @Option(
        name: .long,
        help: ArgumentHelp(
            "reachd's status API (default: $REACHD_ENDPOINT, else \(ReachdEndpoint.defaultURL)).",
            valueName: "url"
        )
    )
    var endpoint: String?

    @Option(
        name: .customLong("token-file"),
        help: ArgumentHelp("Send the bearer token in this file.", valueName: "path")
    )
    var tokenFile: String?

    @Option(
        name: .long,
        help: ArgumentHelp("Trust the CA certificates in this PEM file for an https:// endpoint.", valueName: "path")
    )
    var cacert: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Authenticate as this user (basic auth); the password comes from --password-file.",
            valueName: "name"
        )
    )
    var user: String?

    @Option(
        name: .customLong("password-file"),
        help: ArgumentHelp("The basic-auth password, one line in this file.", valueName: "path")
    )
    var passwordFile: String?

    /// The endpoint and credentials the options and environment name; exits 2 when they cannot be used.
    func resolvedEndpoint() throws -> ReachdEndpoint {
        do {
            return try ReachdEndpoint.resolve(
                configured: endpoint,
                tokenFile: tokenFile,
                caFile: cacert,
                user: user,
                passwordFile: passwordFile
            )
        } catch {
            Output.error("reachctl: \(error)")
            throw ExitCode(ExitStatus.unreachable)
        }
    }

    /// A client of the endpoint the options name.
    func client() throws -> ReachdClient {
        ReachdClient(endpoint: try resolvedEndpoint())
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the current verdict, its reason and every target.",
            discussion: "Exit status: 0 connected, 1 disconnected or unknown, 2 reachd unreachable."
        )

        @ParentCommand var root: ReachctlCommand

        @Flag(help: "Print the status document as reachd sent it (JSON).")
        var json = false

        func run() async throws {
            let client = try root.client()
            try await Summary.report(json: json) { try await client.status() }
        }
    }

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make reachd probe every target now, then show the new verdict as status does.",
            discussion: "Exit status: 0 connected, 1 disconnected or unknown, 2 reachd unreachable."
        )

        @ParentCommand var root: ReachctlCommand

        @Flag(help: "Print the status document as reachd sent it (JSON).")
        var json = false

        func run() async throws {
            let client = try root.client()
            try await Summary.report(json: json) { try await client.check() }
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
        write(text + "\n", to: STDOUT_FILENO)
    }

    static func error(_ text: String) {
        write(text + "\n", to: STDERR_FILENO)
    }

    private static func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }
}
