import ArgumentParser
import Foundation
import ReachCore
import ReachServer

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
                """)

        @ParentCommand var root: ReachctlCommand

        @Flag(help: "Reconnect when the stream breaks, until interrupted.")
        var follow = false

        func run() async throws {
            let endpoint = try root.resolvedEndpoint()
            let follow = self.follow
            let status: Int32 = try await ReachdClient.with(endpoint) { client in
                var receivedAny = false
                do {
                    try await client.follow(backoff: ReconnectBackoff(first: .milliseconds(250), longest: .seconds(5))) { event in
                        receivedAny = true
                        guard event.event == nil || event.event == "verdict" else { return }
                        guard let document = try? JSONDecoder().decode(StatusDocument.self, from: Data(event.data.utf8)) else {
                            Output.error("reachctl: an event that is not a status document: \(event.data.prefix(200))")
                            return
                        }
                        Output.line(Self.line(document))
                    } onBroken: { error, wait in
                        guard follow else { throw error }
                        Output.error("reachctl: \(error.description); reconnecting in \(Self.text(wait))")
                    }
                } catch let error as ReachdUnreachable {
                    Output.error("reachctl: \(error.description)")
                    return receivedAny ? ExitStatus.streamBroke : ExitStatus.unreachable
                }
                return ExitStatus.connected
            }
            throw ExitCode(status)
        }

        /// `2026-11-21T12:09:05.123Z  disconnected  connection_refused  #4  target server: connection refused`
        static func line(_ document: StatusDocument, at date: Date = Date()) -> String {
            var fields = [RFC3339Text.string(from: date), document.state, document.reason, "#\(document.sequence)"]
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
