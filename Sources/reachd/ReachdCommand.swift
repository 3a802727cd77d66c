import ArgumentParser
import FoundationEssentials
import Logging
import ReachConfig
import ReachCore
import ReachDaemon
import ReachLogging
import ReachPOSIX
import ReachSystemd

#if canImport(Glibc)
import Glibc
#endif

/// `reachd`: the connectivity monitor daemon.
struct ReachdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reachd",
        abstract: "Answers one question, instantly and truthfully: can this machine reach its server right now?",
        discussion: """
            reachd combines link state from netlink with server health probes into one verdict, \
            connected or disconnected, always with a reason.

            The configuration comes from --config, else $REACHD_CONFIG, else the embedded default \
            (the same text as config/reachd.yaml).

            Exit status: 0 after SIGTERM or SIGINT; 78 (EX_CONFIG) when the configuration or its web configuration file has \
            problems; 69 (EX_UNAVAILABLE) when reachd cannot listen on an address of listen, \
            socket or grpc_health.listen (the address is in use, needs privileges, or is not this \
            machine's), which it says in one line before it has claimed to run; 1 on any other failure.
            """,
        version: ReachVersion.current
    )

    /// EX_CONFIG from sysexits.h: what systemd and scripts expect of a configuration error.
    static let configurationErrorExitCode: Int32 = 78

    /// EX_UNAVAILABLE from sysexits.h: an address to listen on cannot be had (``ListenFailure``).
    static let listenErrorExitCode: Int32 = 69

    @Option(name: .long, help: ArgumentHelp("The configuration file.", valueName: "path"))
    var config: String?

    @Option(
        name: .customLong("check-config"),
        help: ArgumentHelp(
            "Check a configuration file: print \"ok\", or every problem, and exit (78 on problems).",
            valueName: "path"
        )
    )
    var checkConfig: String?

    @Option(
        name: .customLong("targets-file"),
        help: ArgumentHelp(
            "Watch the URLs in this file (one per line) instead of the configured targets.",
            valueName: "path"
        )
    )
    var targetsFile: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Serve the status endpoint on this address instead of the configured one.",
            valueName: "host:port"
        )
    )
    var listen: String?

    @Option(
        name: .customLong("web.config.file"),
        help: ArgumentHelp(
            "An exporter-toolkit web configuration file (TLS, client certificates, basic auth) for the status endpoint, instead of api.web_config_file.",
            valueName: "path"
        )
    )
    var webConfigFile: String?

    @Option(
        name: .customLong("log-target"),
        help: ArgumentHelp("Where log lines go, instead of the configured log.target.", valueName: "target")
    )
    var logTarget: LogSettings.Target?

    func run() async throws {
        if let checkConfig {
            do {
                let configuration = try DaemonConfiguration.load(from: .file(checkConfig), webConfigFile: webConfigFile)
                try Daemon.checkListenerSecurity(configuration)
                for warning in Daemon.hostWarnings(configuration.engine) { print("warning: \(warning)") }
                print("ok")
                return
            } catch {
                print(error.description)
                throw ExitCode(Self.configurationErrorExitCode)
            }
        }

        let environment = ProcessInfo.processInfo.environment
        let source = DaemonConfiguration.Source.resolve(commandLine: config, environment: environment)
        let (targetsFile, listen, logTarget, webConfigFile) = (targetsFile, listen, logTarget, webConfigFile)
        // A reload (SIGHUP) loads the configuration exactly as start-up does, overrides included.
        let load: @Sendable () throws(ConfigurationError) -> DaemonConfiguration = { () throws(ConfigurationError) in
            var configuration = try DaemonConfiguration.load(
                from: source,
                environment: environment,
                webConfigFile: webConfigFile
            )
            if let targetsFile { try configuration.replaceTargets(withURLsIn: targetsFile) }
            if let listen { try configuration.replaceListenAddress(with: listen) }
            if let logTarget { configuration.log.target = logTarget }
            try Daemon.checkListenerSecurity(configuration)
            return configuration
        }
        let configuration: DaemonConfiguration
        do {
            configuration = try load()
        } catch {
            LogfmtLogHandler.standardError("reachd: configuration problems:\n\(error.description)\n")
            throw ExitCode(Self.configurationErrorExitCode)
        }
        let output = LogOutput(settings: configuration.log, environment: environment)
        defer { output.finish() }
        let logger = output.logger(label: "reachd")
        // SIGHUP means "reload" from the start: one that arrives before the daemon traps it (its
        // first milliseconds) is ignored rather than ending reachd (its default action).
        signal(SIGHUP, SIG_IGN)
        do {
            try await Daemon(
                configuration: configuration,
                source: source,
                notifier: SystemdNotifier(environment: environment),
                reload: load,
                logger: logger
            ).run()
        } catch let failure as ListenFailure {
            Self.report(failure, output: output, logger: logger, environment: environment)
            throw ExitCode(Self.listenErrorExitCode)
        }
    }

    /// Says why reachd cannot start in one line, once wherever a person looks: the log (the
    /// journal, which `systemctl status` shows), and standard error when that is not the log
    /// already nor the journal's stream.
    private static func report(
        _ failure: ListenFailure,
        output: LogOutput,
        logger: Logger,
        environment: [String: String]
    ) {
        let standardErrorIsJournal = JournalAvailability.standardErrorIsJournalStream(environment: environment)
        if output.target == .journald || standardErrorIsJournal {
            logger.critical(
                "\(failure)",
                metadata: ["address": "\(failure.address)", "key": "\(failure.key)", "errno": "\(failure.cause.code)"]
            )
        }
        if !standardErrorIsJournal {
            LogfmtLogHandler.standardError("reachd: \(failure)\n")
        }
    }
}
