import ArgumentParser
import ReachAPI
import ReachClient
import ReachCore
import ReachSupport
import Synchronization

extension ReachctlCommand {
    struct WaitOnline: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "wait-online",
            abstract: "Wait until reachd says connected, like nm-online or systemd-networkd-wait-online.",
            discussion: """
                Exits 0 as soon as the state is connected. Keeps trying while reachd cannot be \
                reached (it may still be starting), backing off up to 2 s and resuming after the \
                last event seen. At the timeout, exits 1 when reachd answered but never said \
                connected, 2 when it could never be reached.

                For a unit that must wait for the server: ExecStartPre=/usr/bin/reachctl wait-online --timeout 60s
                """
        )

        @ParentCommand var root: ReachctlCommand

        @Option(help: ArgumentHelp("Give up after this long: 30s, 500ms, 2m, or seconds.", valueName: "duration"))
        var timeout = DurationArgument(argument: "30s")!

        @Flag(name: .shortAndLong, help: "Print nothing, not even why it gave up.")
        var quiet = false

        /// What the waiting learned, for the message at the timeout.
        private final class Progress: Sendable {
            let reachable = Mutex(false)
            let lastWords = Mutex<String?>(nil)
        }

        /// Follows the event stream until it says connected, trying again (with backoff, resuming
        /// after the last event seen) while reachd cannot be reached.
        private static func waitForConnected(_ client: ReachdClient, progress: Progress) async throws {
            try await client.follow(backoff: ReconnectBackoff(first: .milliseconds(100), longest: .seconds(2))) {
                update in
                switch update {
                case .verdict(let document):
                    progress.reachable.withLock { $0 = true }
                    guard document.state != ConnectivityState.connected.rawValue else { return false }
                    progress.lastWords.withLock { $0 = document.headline }
                case .disconnected(let error, _):
                    progress.lastWords.withLock { $0 = error.description }
                }
                return true
            }
        }

        func run() async throws {
            let client = try root.client()
            let progress = Progress()
            do {
                try await withDeadline(timeout.duration) { try await Self.waitForConnected(client, progress: progress) }
                return
            } catch is DeadlineExceeded {}
            let wasReachable = progress.reachable.withLock { $0 }
            if !quiet {
                let why = progress.lastWords.withLock { $0 } ?? "no answer"
                Output.error("reachctl: not connected after \(timeout): \(why)")
            }
            throw ExitCode(wasReachable ? ExitStatus.notConnected : ExitStatus.unreachable)
        }
    }
}
