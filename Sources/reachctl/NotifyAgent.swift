import ArgumentParser
import FoundationEssentials
import Logging
import ReachClient
import ReachNotifications

extension ReachctlCommand {
    struct NotifyAgent: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "notify-agent",
            abstract: "Show reachd's verdict as a desktop notification (run by the reachd-notify user unit).",
            discussion: """
                Follows reachd's event stream and keeps one notification on the desktop: a \
                persistent "Waiting for connectivity…" with the reason and a "Check now" action \
                while disconnected ("Sign in to the network" with an "Open sign-in page" action \
                behind a captive portal), replaced at once by a brief "Connected" when restored. \
                At most one pop-up per --min-interval; the final state is always shown. With a \
                portal session's end known, one warning --portal-warning before it. With \
                --notify-slow, "Your connection is slow" while connected but impaired. Survives \
                reachd, the session bus and the notification server going away and coming back. \
                Logs to standard error.
                """
        )

        @ParentCommand var root: ReachctlCommand

        @Option(
            name: .customLong("min-interval"),
            help: ArgumentHelp("Pop up at most once per this long: 10s, 500ms, 1m.", valueName: "duration")
        )
        var minInterval = DurationArgument(argument: "10s")!

        @Option(
            name: .customLong("connected-for"),
            help: ArgumentHelp("How long \"Connected\" stays.", valueName: "duration")
        )
        var connectedFor = DurationArgument(argument: "5s")!

        @Option(
            name: .customLong("portal-warning"),
            help: ArgumentHelp("Warn this long before a captive portal's session ends.", valueName: "duration")
        )
        var portalWarning = DurationArgument(argument: "5m")!

        @Flag(
            name: .customLong("notify-slow"),
            help:
                "Also say \"Your connection is slow\" while connected with an impaired quality (or REACHD_NOTIFY_SLOW=1)."
        )
        var notifySlow = false

        @Flag(help: "Log every bus event and reconnect attempt.")
        var verbose = false

        func run() async throws {
            let endpoint = try root.resolvedEndpoint()
            var logger = Logger(label: "reachctl.notify-agent") { StreamLogHandler.standardError(label: $0) }
            logger.logLevel = verbose ? .debug : .info
            let settings = NotificationPolicy<ContinuousClock.Instant>.Settings(
                minInterval: minInterval.duration,
                connectedFor: max(connectedFor.duration, .milliseconds(1)),
                portalWarning: portalWarning.duration,
                notifySlow: notifySlow || ProcessInfo.processInfo.environment["REACHD_NOTIFY_SLOW"] == "1"
            )
            logger.info("following reachd at \(endpoint.base); at most one notification per \(minInterval)")
            await NotificationAgent(client: ReachdClient(endpoint: endpoint), settings: settings, logger: logger).run()
        }
    }
}
