// Runs the embedded service (ReachKitEmbedded's EmbeddedService, reachd's engine in-process) on a
// configuration file and writes each verdict as reachd's event stream frames it, `data: {...}`
// lines, so that a test can lay its verdicts beside reachd's for the same faults.
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
let writing = Task {
    for await event in events {
        // What reachd's `/v1/events` sends for the same event, written at once (not held in a buffer).
        FileHandle.standardOutput.write(
            StatusDocument(event: event, likelyConnected: service.isLikelyConnected).eventFrame
        )
    }
}
try await ServiceGroup(services: [service], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger).run()
writing.cancel()
