import ArgumentParser
import Foundation
import Logging
import ReachConfig
import ReachCore
import ReachDaemon

/// `reachd`: the connectivity monitor daemon.
@main
struct ReachdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reachd",
        abstract: "Answers one question, instantly and truthfully: can this machine reach its server right now?",
        discussion: """
            reachd combines link state from netlink with server health probes into one verdict, \
            connected or disconnected, always with a reason.

            The configuration comes from --config, else $REACHD_CONFIG, else the embedded default \
            (the same text as config/reachd.yaml).
            """,
        version: ReachVersion.current)

    /// EX_CONFIG from sysexits.h: what systemd and scripts expect of a configuration error.
    static let configurationErrorExitCode: Int32 = 78

    @Option(name: .long, help: ArgumentHelp("The configuration file.", valueName: "path"))
    var config: String?

    @Option(name: .customLong("check-config"), help: ArgumentHelp("Check a configuration file: print \"ok\", or every problem, and exit (78 on problems).", valueName: "path"))
    var checkConfig: String?

    @Option(name: .customLong("targets-file"), help: ArgumentHelp("Watch the URLs in this file (one per line) instead of the configured targets.", valueName: "path"))
    var targetsFile: String?

    @Option(name: .long, help: ArgumentHelp("Serve the status endpoint on this address instead of the configured one.", valueName: "host:port"))
    var listen: String?

    func run() async throws {
        if let checkConfig {
            do {
                _ = try Configuration.load(from: .file(checkConfig))
                print("ok")
                return
            } catch {
                print(error.description)
                throw ExitCode(Self.configurationErrorExitCode)
            }
        }

        let source = Configuration.Source.resolve(commandLine: config, environment: ProcessInfo.processInfo.environment)
        var configuration: Configuration
        do {
            configuration = try Configuration.load(from: source)
            if let targetsFile { try configuration.replaceTargets(withURLsIn: targetsFile) }
            if let listen { try configuration.replaceListenAddress(with: listen) }
        } catch {
            FileHandle.standardError.write(Data("reachd: configuration problems:\n\(error.description)\n".utf8))
            throw ExitCode(Self.configurationErrorExitCode)
        }
        let level = configuration.log.level
        let logger = Logger(label: "reachd") { LogfmtLogHandler(label: $0, level: level) }
        try await Daemon(configuration: configuration, source: source, logger: logger).run()
    }
}
