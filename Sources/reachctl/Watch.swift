import ArgumentParser
import ReachAPI
import ReachClient
import ReachCore
import ReachPOSIX
import ReachSupport

extension ReachctlCommand {
    struct Watch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print one line per verdict change, as reachd publishes it.",
            discussion: """
                Each line: the time the event arrived, the state, the reason, the event's sequence \
                number and the reason in words. The first line is the current verdict.

                Without --follow, exits 3 when the stream breaks (2 when reachd cannot be reached \
                at all). With --follow, reconnects (resuming after the last event seen, backing off \
                up to 5 s) until interrupted.
                """
        )

        @ParentCommand var root: ReachctlCommand

        @Flag(help: "Reconnect when the stream breaks, until interrupted.")
        var follow = false

        func run() async throws {
            let client = try root.client()
            let follow = self.follow
            var receivedAny = false
            do {
                try await client.follow(backoff: ReconnectBackoff(first: .milliseconds(250), longest: .seconds(5))) {
                    update in
                    switch update {
                    case .verdict(let document):
                        receivedAny = true
                        Output.line(Self.line(document))
                    case .disconnected(let error, let wait):
                        guard follow else { throw error }
                        Output.error("reachctl: \(error.description); reconnecting in \(Self.text(wait))")
                    }
                    return true
                }
            } catch let error as ReachdClientError {
                Output.error("reachctl: \(error.description)")
                throw ExitCode(receivedAny ? ExitStatus.streamBroke : ExitStatus.unreachable)
            }
        }

        /// `2026-11-21T12:09:05.123Z  disconnected  connection_refused  #4  target server: connection refused`
        static func line(_ document: StatusDocument, at time: WallTime = WallTime.now()) -> String {
            var fields = [RFC3339.string(from: time), document.state, document.reason, "#\(document.sequence)"]
            if document.reset { fields.append("(reset)") }
            fields.append(document.reasonDetail)
            return fields.joined(separator: "  ")
        }

        static func text(_ duration: Duration) -> String {
            let (seconds, attoseconds) = duration.components
            let ms = seconds * 1000 + attoseconds / 1_000_000_000_000_000
            return ms % 1000 == 0 ? "\(ms / 1000)s" : "\(ms)ms"
        }
    }
}
