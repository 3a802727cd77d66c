import FoundationEssentials
import ReachPOSIX

#if canImport(Glibc)
import Glibc
#endif

extension DaemonConfiguration {
    /// Where a configuration comes from.
    package enum Source: Sendable, Equatable, CustomStringConvertible {
        case file(String)
        /// The default compiled into reachd: the same text as `config/reachd.yaml`.
        case embeddedDefault

        /// `--config PATH` wins, then `$REACHD_CONFIG`, then the embedded default.
        package static func resolve(commandLine path: String?, environment: [String: String]) -> Source {
            if let path { return .file(path) }
            if let path = environment["REACHD_CONFIG"], !path.isEmpty { return .file(path) }
            return .embeddedDefault
        }

        package var description: String {
            switch self {
            case .file(let path): path
            case .embeddedDefault: "embedded default configuration"
            }
        }
    }

    /// Parses YAML text; `source` names it in problem reports. Token files named in it are read now.
    ///
    /// - Parameters:
    ///   - environment: Supplies `$CREDENTIALS_DIRECTORY` for `bearer_token_credential`.
    ///   - webConfigFile: `--web.config.file`: read instead of `api.web_config_file`.
    package static func parse(
        _ yaml: String,
        source: String,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        webConfigFile: String? = nil
    ) throws(ConfigurationError) -> DaemonConfiguration {
        try ConfigurationParser.parse(yaml, source: source, environment: environment, webConfigFile: webConfigFile)
    }

    /// Reads and parses a configuration, and the web configuration file it or `webConfigFile` names.
    package static func load(
        from source: Source,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        webConfigFile: String? = nil
    ) throws(ConfigurationError) -> DaemonConfiguration {
        switch source {
        case .embeddedDefault:
            return try parse(
                DefaultConfiguration.yaml,
                source: source.description,
                environment: environment,
                webConfigFile: webConfigFile
            )
        case .file(let path):
            let text: String
            switch BoundedFile.readText(path, limit: BoundedFile.textLimit) {
            case .success(let read): text = read
            case .failure(let failure):
                throw ConfigurationError(problems: [
                    ConfigurationProblem(source: path, keyPath: "", message: "cannot read the file: \(failure)")
                ])
            }
            return try parse(text, source: path, environment: environment, webConfigFile: webConfigFile)
        }
    }
}
