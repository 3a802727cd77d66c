import Foundation
import ReachCore

extension Configuration {
    /// Replaces the targets with one HTTP target per URL in a file (one per line; blank lines and
    /// `#` comments skipped), named `target-1`, `target-2`, ... in file order, with the default
    /// cadence and deadline. For benchmarks and quick checks that watch many URLs.
    public mutating func replaceTargets(withURLsIn path: String) throws(ConfigurationError) {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ConfigurationError(problems: [ConfigurationProblem(source: path, keyPath: "", message: "cannot read the targets file")])
        }
        let urls = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        let yaml = "targets:\n" + urls.enumerated().map { "  - name: target-\($0.offset + 1)\n    url: \"\($0.element)\"\n" }.joined()
        targets = try Configuration.parse(yaml, source: path, environment: [:]).targets
        if case .quorum(let k) = policy, k > targets.count { policy = .all }
    }

    /// Replaces the status endpoint's address with `host:port`; a non-loopback one needs ``apiToken``.
    public mutating func replaceListenAddress(with address: String) throws(ConfigurationError) {
        let yaml = "listen: \"\(address)\"\nserver: { base_url: \"http://127.0.0.1\" }\n"
        listen = try ConfigurationParser.parse(yaml, source: "--listen", environment: [:], tokenIsSet: apiToken != nil).listen
    }
}
