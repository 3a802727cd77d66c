import FoundationEssentials
import ReachConfig

extension Configuration {
    /// The engine's part of reachd's configuration file, found as reachd finds it: `path`, else
    /// `$REACHD_CONFIG`, else reachd's embedded default. The file's daemon-only sections (listeners,
    /// token, hooks, webhooks, history, log) are checked too, and left aside.
    ///
    /// - Throws: ``ConfigurationError`` naming the file, and the key and line of each problem.
    public init(configurationFile path: String?) throws(ConfigurationError) {
        let environment = ProcessInfo.processInfo.environment
        self = try DaemonConfiguration.load(
            from: .resolve(commandLine: path, environment: environment),
            environment: environment
        ).engine
    }
}
