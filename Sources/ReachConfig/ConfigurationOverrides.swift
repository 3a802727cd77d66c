import FoundationEssentials
import ReachCore
import ReachPOSIX
import ReachSupport
import Yams

#if canImport(Glibc)
import Glibc
#endif

extension DaemonConfiguration {
    /// Replaces the targets with one HTTP target per URL in a file (one per line; blank lines and
    /// `#` comments skipped), named `target-1`, `target-2`, ... in file order, with the default
    /// cadence and deadline. For benchmarks and quick checks that watch many URLs. A problem names
    /// the file's line.
    package mutating func replaceTargets(withURLsIn path: String) throws(ConfigurationError) {
        let text: String
        switch BoundedFile.readText(path, limit: BoundedFile.textLimit) {
        case .success(let read): text = read
        case .failure(let failure):
            throw ConfigurationError(problems: [
                ConfigurationProblem(source: path, keyPath: "", message: "cannot read the targets file: \(failure)")
            ])
        }
        var urls: [(line: Int, url: String)] = []
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let url = line.trimmingWhitespace
            if !url.isEmpty && !url.hasPrefix("#") { urls.append((index + 1, url)) }
        }
        guard !urls.isEmpty else {
            throw ConfigurationError(problems: [
                ConfigurationProblem(source: path, keyPath: "", message: "no URLs: write one health URL per line")
            ])
        }
        // One document for all of them: parsed one by one, a thousand URLs took two seconds.
        let list = urls.enumerated().map { number, entry in
            Self.mapping([("name", Self.string("target-\(number + 1)")), ("url", Self.string(entry.url))])
        }
        do throws(ConfigurationError) {
            engine.targets = try DaemonConfiguration.parse(
                Self.yaml(Self.mapping([("targets", Self.sequence(list))])),
                source: path,
                environment: [:]
            ).targets
        } catch {
            // A problem's key path starts with `targets[i]`: the file's line of the i-th URL.
            throw ConfigurationError(
                problems: error.problems.map { problem in
                    let prefix = "targets["
                    let index =
                        problem.keyPath.hasPrefix(prefix)
                        ? Int(problem.keyPath.dropFirst(prefix.count).prefix(while: \.isNumber)) : nil
                    let line = index.flatMap { urls.indices.contains($0) ? urls[$0].line : nil }
                    return ConfigurationProblem(source: path, keyPath: "", line: line, message: problem.message)
                }
            )
        }
        engine.policy = engine.policy.capped(at: engine.targets.count)
    }

    /// Replaces the status endpoint's address with `host:port`; a non-loopback one needs ``apiToken``
    /// or a web configuration that authenticates clients.
    package mutating func replaceListenAddress(with address: String) throws(ConfigurationError) {
        let document = Self.mapping([
            ("listen", Self.string(address)), ("server", Self.mapping([("base_url", Self.string("http://127.0.0.1"))])),
        ])
        listen = try ConfigurationParser.parse(
            Self.yaml(document),
            source: "--listen",
            environment: [:],
            tokenIsSet: apiToken != nil || web?.authenticatesClients == true
        ).listen
    }

    /// A command-line value becomes YAML through the emitter, which quotes and escapes it: pasted
    /// into YAML text, a quote and a newline in it could add keys of their own.
    private static func yaml(_ document: Node) -> String {
        (try? Yams.serialize(node: document)) ?? ""
    }

    // Nodes built with explicit tags and the rule-less resolver: Yams' default tags would load
    // its default resolver, whose regular expressions bring in ICU (see `ImplicitTag`).
    private static func string(_ text: String) -> Node { Node(text, Tag(.str, .basic)) }
    private static func sequence(_ nodes: [Node]) -> Node { Node(nodes, Tag(.seq, .basic)) }
    private static func mapping(_ pairs: [(String, Node)]) -> Node {
        Node(pairs.map { (string($0), $1) }, Tag(.map, .basic))
    }
}
