import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import ReachCore
import Yams

extension Configuration {
    /// Replaces the targets with one HTTP target per URL in a file (one per line; blank lines and
    /// `#` comments skipped), named `target-1`, `target-2`, ... in file order, with the default
    /// cadence and deadline. For benchmarks and quick checks that watch many URLs. A problem names
    /// the file's line.
    public mutating func replaceTargets(withURLsIn path: String) throws(ConfigurationError) {
        let text: String
        switch BoundedFile.readText(path, limit: BoundedFile.textLimit) {
        case .success(let read): text = read
        case .failure(let failure):
            throw ConfigurationError(problems: [ConfigurationProblem(source: path, keyPath: "", message: "cannot read the targets file: \(failure)")])
        }
        var urls: [(line: Int, url: String)] = []
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let url = line.trimmingWhitespace
            if !url.isEmpty && !url.hasPrefix("#") { urls.append((index + 1, url)) }
        }
        guard !urls.isEmpty else {
            throw ConfigurationError(problems: [ConfigurationProblem(source: path, keyPath: "", message: "no URLs: write one health URL per line")])
        }
        var parsed: [ProbeTarget] = []
        var problems: [ConfigurationProblem] = []
        for (number, entry) in urls.enumerated() {
            let target: Node = ["name": Node("target-\(number + 1)", Tag(.str)), "url": Node(entry.url, Tag(.str))]
            do throws(ConfigurationError) {
                parsed += try Configuration.parse(Self.yaml(["targets": [target]]), source: path, environment: [:]).targets
            } catch {
                problems += error.problems.map { ConfigurationProblem(source: path, keyPath: "", line: entry.line, message: $0.message) }
            }
        }
        guard problems.isEmpty else { throw ConfigurationError(problems: problems) }
        targets = parsed
        if case .quorum(let k) = policy, k > targets.count { policy = .all }
    }

    /// Replaces the status endpoint's address with `host:port`; a non-loopback one needs ``apiToken``.
    public mutating func replaceListenAddress(with address: String) throws(ConfigurationError) {
        let document: Node = ["listen": Node(address, Tag(.str)), "server": ["base_url": "http://127.0.0.1"]]
        listen = try ConfigurationParser.parse(Self.yaml(document), source: "--listen", environment: [:], tokenIsSet: apiToken != nil).listen
    }

    /// A command-line value becomes YAML through the emitter, which quotes and escapes it: pasted
    /// into YAML text, a quote and a newline in it could add keys of their own.
    private static func yaml(_ document: Node) -> String {
        (try? Yams.serialize(node: document)) ?? ""
    }
}
