// Runs the embedded service (ReachKitEmbedded's EmbeddedService, reachd's engine in-process) on a
// configuration file and writes each verdict as reachd's event stream frames it, `data: {...}`
// lines, so that a test can lay its verdicts beside reachd's for the same faults; and each change
// of the quality a program is told (`qualityChanges()`), as a `quality: {...}` line of the status
// document's quality fields (`quality: null` for none).
//
//   embedded-verdicts-helper CONFIG    until SIGTERM or SIGINT; its log goes to stderr
import Foundation
import Logging
import ReachAPI
import ReachKit
import ReachKitEmbedded

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: embedded-verdicts-helper CONFIG\n".utf8))
    exit(2)
}
LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
let logger = Logger(label: "embedded")
let service = try EmbeddedService(configurationFile: CommandLine.arguments[1], logger: logger)
let events = service.monitor.subscribe()
let qualities = service.qualityChanges()
// One writer at a time: a frame longer than a pipe's atomic write would interleave with a line.
let output = NSLock()
func write(_ data: Data) { output.withLock { FileHandle.standardOutput.write(data) } }
let writing = Task {
    for await event in events {
        // What reachd's `/v1/events` sends for the same event, written at once (not held in a buffer).
        write(StatusDocument(event: event, likelyConnected: service.isLikelyConnected).eventFrame)
    }
}
let writingQualities = Task {
    for await quality in qualities {
        let fields: Any =
            quality.map { quality in
                [
                    "state": quality.state.rawValue, "fault": quality.fault?.code ?? NSNull(),
                    "target": quality.target ?? NSNull(),
                    "exceeded": quality.exceeded.map {
                        ["measure": $0.measure.rawValue, "value": $0.value, "budget": $0.budget] as [String: Any]
                    },
                ] as [String: Any]
            } ?? NSNull()
        write(
            Data("quality: ".utf8) + (try JSONSerialization.data(withJSONObject: fields, options: .fragmentsAllowed))
                + Data("\n".utf8)
        )
    }
}
try await ServiceGroup(services: [service], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger).run()
writing.cancel()
writingQualities.cancel()
