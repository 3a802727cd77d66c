import FoundationEssentials
import Logging
import ReachCore
import ReachSupport

#if canImport(Glibc)
import Glibc
#endif

/// Maps a YAML document onto ``DaemonConfiguration``, reporting every problem at once.
struct ConfigurationParser {
    static let rootKeys =
        [
            "server", "probe", "targets", "policy", "interfaces", "listen", "socket", "api", "grpc_health", "log",
            "captive_portal", "tls", "history", "upstream", "quality",
        ] + reactionKeys
    static let httpKeys = ["expect", "headers", "bearer_token_file", "bearer_token_credential", "tls"]
    static let targetKeys =
        [
            "name", "kind", "url", "address", "service", "watch", "interval", "timeout",
            "failures_before_down", "successes_before_up", "address_family", "quality",
        ] + httpKeys + dnsKeys + icmpKeys
    static let serverKeys = ["base_url", "health_path", "address_family", "quality"] + httpKeys
    static let intervalRange = Duration.milliseconds(100)...Duration.seconds(3600)
    static let timeoutRange = Duration.milliseconds(10)...Duration.seconds(300)
    static let settleRange = Duration.zero...Duration.seconds(10)
    static let coalescingRange = Duration.zero...Duration.seconds(60)
    static let countRange = 1...100
    static let certificateWarningRange = Duration.zero...Duration.seconds(365 * 86_400)
    static let idleTimeoutRange = Duration.seconds(1)...Duration.seconds(3600)

    /// Per-target defaults from the `probe` section.
    struct ProbeDefaults {
        var interval = Duration.seconds(1)
        var timeout = Duration.seconds(2)
        var hysteresis = Hysteresis()
        var addressFamily = AddressFamily.auto
        var coalescing = ProbeTarget.defaultCoalescing
        /// `per_interface`: a setting for all targets, not one a target overrides.
        var perInterface = false
        /// The `quality` section: every target's budgets unless it overrides them; `nil` without one.
        var quality: QualityBudget?
    }

    var reader: ConfigReader
    /// The process environment, for `$CREDENTIALS_DIRECTORY` (systemd's `LoadCredential=`).
    let environment: [String: String]
    /// Whether a token is already known, so that a non-loopback `listen` needs none in this document.
    let tokenIsSet: Bool
    /// `--web.config.file`, which wins over `api.web_config_file`.
    let webConfigFile: String?

    init(source: String, environment: [String: String], tokenIsSet: Bool, webConfigFile: String? = nil) {
        reader = ConfigReader(source: source)
        self.environment = environment
        self.tokenIsSet = tokenIsSet
        self.webConfigFile = webConfigFile
    }

    static func parse(
        _ yaml: String,
        source: String,
        environment: [String: String],
        tokenIsSet: Bool = false,
        webConfigFile: String? = nil
    ) throws(ConfigurationError) -> DaemonConfiguration {
        var parser = ConfigurationParser(
            source: source,
            environment: environment,
            tokenIsSet: tokenIsSet,
            webConfigFile: webConfigFile
        )
        let configuration = parser.document(yaml)
        guard let configuration, parser.reader.problems.isEmpty else {
            // In reading order; problems without a position (cross-target checks) last.
            let problems = parser.reader.problems.enumerated().sorted { a, b in
                let (lineA, lineB) = (a.element.line ?? .max, b.element.line ?? .max)
                let (columnA, columnB) = (a.element.column ?? 0, b.element.column ?? 0)
                return (lineA, columnA, a.offset) < (lineB, columnB, b.offset)
            }
            throw ConfigurationError(problems: problems.map(\.element))
        }
        return configuration
    }

    mutating func document(_ yaml: String) -> DaemonConfiguration? {
        let root: YAMLNode
        do {
            root = try YAMLComposer.compose(yaml) ?? .emptyMapping
        } catch {
            reportSyntax(error)
            return nil
        }
        guard let entries = reader.mapping(ConfigNode(node: root, path: ""), keys: Self.rootKeys) else { return nil }

        var defaults = entries["probe"].flatMap { parseProbeDefaults($0) } ?? ProbeDefaults()
        if let node = entries["quality"], let quality = parseQuality(node, over: nil) { defaults.quality = quality }
        var targets: [ProbeTarget] = []
        if let server = entries["server"], let target = parseServer(server, defaults: defaults) {
            checkQualityWindow(of: target, at: server)
            targets.append(target)
        }
        if let list = entries["targets"], let items = reader.sequence(list) {
            for item in items {
                guard let target = parseTarget(item, defaults: defaults) else { continue }
                checkQualityWindow(of: target, at: item)
                targets.append(target)
            }
        }
        checkNames(of: targets, entries: entries)

        let policy = entries["policy"].flatMap { parsePolicy($0, targetCount: targets.count) } ?? .all
        let (filter, settle) =
            entries["interfaces"].flatMap { parseInterfaces($0) } ?? (InterfaceFilter(), .milliseconds(100))
        let listen = entries["listen"].flatMap {
            hostPort($0, expected: "host:port to listen on, like 127.0.0.1:9780", ports: 0...65535)
        }
        if let listenNode = entries["listen"], let listen, IPAddress(listen.host) == nil, listen.host != "localhost" {
            reader.report("listen host must be an IP address or localhost, found \"\(listen.host)\"", at: listenNode)
        }
        var apiToken: Secret?
        var tokenWasGiven = tokenIsSet
        var idleTimeout = Duration.seconds(60)
        var webPath = webConfigFile
        if let apiNode = entries["api"],
            let api = reader.mapping(
                apiNode,
                keys: ["bearer_token_file", "bearer_token_credential", "idle_timeout", "web_config_file"]
            )
        {
            if let node = api["web_config_file"],
                let path = reader.string(node, expected: "the path of an exporter-toolkit web configuration file")
            {
                webPath = webPath ?? path
            }
            apiToken = parseBearerToken(api)
            // A token that was given but could not be read is reported there, once.
            tokenWasGiven = tokenWasGiven || api["bearer_token_file"] != nil || api["bearer_token_credential"] != nil
            if let node = api["idle_timeout"], let timeout = reader.duration(node, in: Self.idleTimeoutRange) {
                idleTimeout = timeout
            }
        }
        let web = webPath.flatMap { path in
            let (web, problems) = WebConfigurationParser.parse(path)
            reader.adopt(problems)
            return web
        }
        // A web configuration that could not be read has had its problems reported already.
        let clientsAuthenticate = web?.authenticatesClients ?? (webPath != nil)
        if let listenNode = entries["listen"], let listen, IPAddress(listen.host) != nil, listen.listenerNeedsToken,
            apiToken == nil, !tokenWasGiven,
            !clientsAuthenticate
        {
            reader.report(
                "\(listen) is reachable from other machines: set api.bearer_token_file (or api.bearer_token_credential), or basic_auth_users or RequireAndVerifyClientCert in api.web_config_file, so that only known clients are answered",
                at: listenNode
            )
        }
        var socket: String?
        if let socketNode = entries["socket"],
            let path = reader.string(socketNode, expected: "the path of a unix socket, like /run/reachd/reachd.sock")
        {
            if path.hasPrefix("/") && path.utf8.count < 108 {
                socket = path
            } else {
                reader.report(
                    "expected an absolute path shorter than 108 bytes, like /run/reachd/reachd.sock",
                    at: socketNode
                )
            }
        }
        var grpcHealthListen: HostPort?
        if let grpcNode = entries["grpc_health"], let grpc = reader.mapping(grpcNode, keys: ["listen"]) {
            if let node = grpc["listen"],
                let address = hostPort(
                    node,
                    expected: "host:port for the gRPC health service, like 127.0.0.1:9781",
                    ports: 0...65535
                )
            {
                if IPAddress(address.host) == nil {
                    reader.report(
                        "the gRPC health service listens on an IP address, found \"\(address.host)\"",
                        at: node
                    )
                } else if address.listenerNeedsToken, apiToken == nil, !tokenWasGiven {
                    reader.report(
                        "\(address) is reachable from other machines: set api.bearer_token_file (or api.bearer_token_credential); callers then send authorization: Bearer <token> metadata",
                        at: node
                    )
                } else {
                    grpcHealthListen = address
                }
            } else if grpc["listen"] == nil {
                reader.report("missing listen: host:port for the gRPC health service", at: grpcNode)
            }
        }
        let log = entries["log"].flatMap { parseLog($0) } ?? LogSettings()
        let reactions = parseReactions(entries)
        let captivePortal =
            entries["captive_portal"].flatMap { parseCaptivePortal($0, defaults: defaults) } ?? CaptivePortalSettings()
        var configuration = DaemonConfiguration(
            targets: targets,
            policy: policy,
            interfaces: filter,
            linkSettleWindow: settle,
            listen: listen ?? HostPort(host: "127.0.0.1", port: 9780),
            apiToken: apiToken,
            apiIdleTimeout: idleTimeout,
            socket: socket,
            grpcHealthListen: grpcHealthListen,
            log: log
        ).with(reactions)
        configuration.captivePortal = captivePortal
        configuration.web = web
        configuration.history = entries["history"].flatMap { parseHistory($0) } ?? HistorySettings()
        if let node = entries["upstream"], let upstream = parseUpstream(node) { configuration.upstream = upstream }
        configuration.variants.perInterface = defaults.perInterface
        if let node = entries["tls"], let tls = reader.mapping(node, keys: ["warn_before"]),
            let warnNode = tls["warn_before"],
            let warnBefore = reader.duration(warnNode, in: Self.certificateWarningRange)
        {
            configuration.certificateWarning = warnBefore
        }
        return configuration
    }

    mutating func reportSyntax(_ error: YAMLError) {
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            let detail = context.map { " \($0.text)" } ?? ""
            reader.report("YAML syntax error: \(problem)\(detail)", path: "", mark: mark)
        case .duplicatedKeysInMapping(let duplicates, let context):
            let keys = duplicates.map { "\"\($0)\"" }.joined(separator: ", ")
            reader.report("duplicate key \(keys) in the mapping that starts here", path: "", mark: context.mark)
        case .memory, .reader:
            reader.report("YAML error: \(error)", path: "")
        }
    }

    // MARK: Sections

    mutating func parseProbeDefaults(_ node: ConfigNode) -> ProbeDefaults? {
        let keys = [
            "interval", "timeout", "failures_before_down", "successes_before_up", "address_family", "coalesce",
            "per_interface",
        ]
        guard let entries = reader.mapping(node, keys: keys) else {
            return nil
        }
        var defaults = ProbeDefaults()
        apply(entries, to: &defaults)
        if let node = entries["per_interface"], let value = reader.boolean(node) { defaults.perInterface = value }
        return defaults
    }

    mutating func parseServer(_ node: ConfigNode, defaults: ProbeDefaults) -> ProbeTarget? {
        guard let entries = reader.mapping(node, keys: Self.serverKeys) else { return nil }
        guard let baseNode = entries["base_url"] else {
            reader.report("missing base_url: the server's URL, like https://api.example.com", at: node)
            return nil
        }
        var path = "/api/v1/health"
        if let pathNode = entries["health_path"],
            let text = reader.string(pathNode, expected: "a path like /api/v1/health")
        {
            if text.hasPrefix("/") {
                path = text
            } else {
                reader.report("must start with \"/\", like /api/v1/health", at: pathNode)
            }
        }
        guard let base = reader.string(baseNode, expected: "a URL like https://api.example.com") else { return nil }
        let trimmed = base.hasSuffix("/") ? String(base.dropLast()) : base
        guard let check = httpCheck(url: trimmed + path, node: baseNode, entries: entries) else { return nil }
        if URLComponents(string: base)?.query != nil {
            reader.report("base_url cannot have a query; put it in health_path", at: baseNode)
        }
        if URLComponents(string: base)?.fragment != nil {
            reader.report(
                "base_url cannot have a fragment (#...): the health path would be appended to it",
                at: baseNode
            )
        }
        var settings = defaults
        apply(entries, to: &settings)
        return ProbeTarget(
            name: "server",
            check: .http(check),
            interval: settings.interval,
            timeout: settings.timeout,
            hysteresis: settings.hysteresis,
            addressFamily: settings.addressFamily,
            coalescing: settings.coalescing,
            quality: settings.quality
        )
    }

    mutating func parseTarget(_ node: ConfigNode, defaults: ProbeDefaults) -> ProbeTarget? {
        guard let entries = reader.mapping(node, keys: Self.targetKeys) else { return nil }
        let name = entries["name"].flatMap { parseTargetName($0) }
        if entries["name"] == nil { reader.report("missing name: every target needs a unique name", at: node) }

        var kind = entries["kind"].flatMap { reader.choice($0, of: ["http", "tcp", "grpc", "dns", "icmp"]) }
        if entries["kind"] == nil {
            if entries["url"] != nil {
                kind = "http"
            } else {
                reader.report("missing kind: http, tcp, grpc, dns or icmp", at: node)
            }
        }
        if kind != "dns" { forbid(Self.dnsKeys, in: entries, because: "it applies to dns targets only") }
        if kind != "icmp" { forbid(Self.icmpKeys, in: entries, because: "it applies to icmp targets only") }
        var settings = defaults
        apply(entries, to: &settings)

        let check: ProbeTarget.Check?
        switch kind {
        case "http":
            forbid(
                ["address", "service", "watch"],
                in: entries,
                because: "it applies to tcp and grpc targets, not http"
            )
            if let urlNode = entries["url"] {
                check = reader.string(urlNode, expected: "a URL").flatMap {
                    httpCheck(url: $0, node: urlNode, entries: entries)
                }.map { .http($0) }
            } else {
                reader.report("missing url: the health endpoint to GET, like https://api.example.com/healthz", at: node)
                check = nil
            }
        case "tcp", "grpc":
            forbid(
                ["url"] + Self.httpKeys.filter { $0 != "tls" },
                in: entries,
                because: "it applies to http targets only"
            )
            if kind == "tcp" {
                forbid(["service", "watch"], in: entries, because: "it applies to grpc targets only")
                forbid(["tls"], in: entries, because: "it applies to https and grpc targets only")
            }
            let endpoint = entries["address"].flatMap { hostPort($0, expected: "host:port, like db.internal:5432") }
            if entries["address"] == nil { reader.report("missing address: host:port to connect to", at: node) }
            let service = entries["service"].flatMap { reader.scalar($0, expected: "a gRPC service name") } ?? ""
            let watch = entries["watch"].flatMap { reader.boolean($0) } ?? false
            // `tls: {}` speaks TLS trusting the system store; no `tls` is plaintext.
            let tls = kind == "grpc" ? entries["tls"].flatMap { parseTLS($0) } : nil
            check = endpoint.map {
                kind == "tcp"
                    ? .tcp($0) : .grpc(GRPCHealthCheck(endpoint: $0, service: service, watch: watch, tls: tls))
            }
        case "dns":
            check = dnsCheck(entries, at: node).map { .dns($0) }
        case "icmp":
            check = icmpCheck(entries, at: node).map { .icmp($0) }
        default:
            check = nil
        }
        guard let name, let check else { return nil }
        return ProbeTarget(
            name: name,
            check: check,
            interval: settings.interval,
            timeout: settings.timeout,
            hysteresis: settings.hysteresis,
            addressFamily: settings.addressFamily,
            coalescing: settings.coalescing,
            quality: settings.quality
        )
    }

    mutating func apply(_ entries: [String: ConfigNode], to settings: inout ProbeDefaults) {
        if let node = entries["interval"], let value = reader.duration(node, in: Self.intervalRange) {
            settings.interval = value
        }
        if let node = entries["timeout"], let value = reader.duration(node, in: Self.timeoutRange) {
            settings.timeout = value
        }
        if let node = entries["failures_before_down"], let value = reader.integer(node, in: Self.countRange) {
            settings.hysteresis.failuresBeforeDown = value
        }
        if let node = entries["successes_before_up"], let value = reader.integer(node, in: Self.countRange) {
            settings.hysteresis.successesBeforeUp = value
        }
        if let node = entries["address_family"],
            let value = reader.choice(node, of: AddressFamily.allCases.map(\.rawValue))
        {
            settings.addressFamily = AddressFamily(rawValue: value) ?? .auto
        }
        if let node = entries["coalesce"], let value = reader.duration(node, in: Self.coalescingRange) {
            settings.coalescing = value
        }
        if let node = entries["quality"], let quality = parseQuality(node, over: settings.quality) {
            settings.quality = quality
        }
    }

    mutating func parsePolicy(_ node: ConfigNode, targetCount: Int) -> TargetPolicy? {
        if case .mapping(let mapping) = node.node {
            guard let quorumNode = reader.mapping(node, keys: ["quorum"])?["quorum"] else {
                // A mapping with other keys has had them reported as unknown already.
                if mapping.isEmpty { reader.report("expected all, any, or { quorum: K }", at: node) }
                return nil
            }
            guard let k = reader.integer(quorumNode, in: 1...max(1, targetCount)) else { return nil }
            return .quorum(k)
        }
        switch reader.choice(node, of: ["all", "any"]) {
        case "all": return .all
        case "any": return .any
        default: return nil
        }
    }

    mutating func parseInterfaces(_ node: ConfigNode) -> (InterfaceFilter, Duration)? {
        guard let entries = reader.mapping(node, keys: ["include", "exclude", "settle_window"]) else { return nil }
        var filter = InterfaceFilter()
        if let node = entries["include"], let include = reader.strings(node) {
            checkGlobs(include, at: node)
            filter.include = include == ["*"] ? [] : include
        }
        if let exclude = entries["exclude"] {
            // An explicitly empty list means "exclude nothing".
            if case .sequence(let items) = exclude.node, items.isEmpty {
                filter.exclude = []
            } else if let patterns = reader.strings(exclude) {
                checkGlobs(patterns, at: exclude)
                filter.exclude = patterns
            }
        }
        let settle =
            entries["settle_window"].flatMap { reader.duration($0, in: Self.settleRange) } ?? .milliseconds(100)
        return (filter, settle)
    }

    /// A bracket range like `[9-0]` would match nothing: almost certainly not what was meant.
    mutating func checkGlobs(_ patterns: [String], at node: ConfigNode) {
        for pattern in patterns {
            for range in Glob(pattern).reversedRanges {
                reader.report(
                    "\"\(pattern)\" has the reversed range \(range.lower)-\(range.upper), which matches nothing",
                    at: node
                )
            }
        }
    }

    mutating func parseLog(_ node: ConfigNode) -> LogSettings? {
        guard let entries = reader.mapping(node, keys: ["target", "level"]) else { return nil }
        var settings = LogSettings()
        if let target = entries["target"].flatMap({ reader.choice($0, of: LogSettings.Target.allCases.map(\.rawValue)) }
        ) {
            settings.target = LogSettings.Target(rawValue: target) ?? .stderr
        }
        if let level = entries["level"].flatMap({ reader.choice($0, of: Logger.Level.allCases.map(\.rawValue)) }) {
            settings.level = Logger.Level(rawValue: level) ?? .info
        }
        return settings
    }

    // MARK: Addresses

    /// An HTTP check from a URL and the target's (or server shorthand's) HTTP options.
    mutating func httpCheck(url text: String, node: ConfigNode, entries: [String: ConfigNode]) -> HTTPCheck? {
        let expectation = entries["expect"].flatMap { parseExpectation($0) } ?? HTTPExpectation()
        let headers = entries["headers"].map { parseHeaders($0) } ?? []
        let token = parseBearerToken(entries)
        let tls = entries["tls"].flatMap { parseTLS($0) } ?? TLSSettings()
        guard var check = httpCheck(url: text, node: node, expectation: expectation) else { return nil }
        if let tlsNode = entries["tls"], !check.isHTTPS {
            reader.report("tls settings apply to https URLs only", at: tlsNode)
        }
        check.headers = headers
        check.bearerToken = token
        check.tls = tls
        return check
    }

    mutating func httpCheck(url text: String, node: ConfigNode, expectation: HTTPExpectation) -> HTTPCheck? {
        guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased() else {
            reader.report("\"\(text)\" is not a URL like https://api.example.com/healthz", at: node)
            return nil
        }
        guard scheme == "http" || scheme == "https" else {
            reader.report("\"\(scheme)\" URLs cannot be probed: use http or https (or a tcp or grpc target)", at: node)
            return nil
        }
        let host = (url.hostAsWritten ?? "").trimming { $0 == "[" || $0 == "]" }
        guard !host.isEmpty else {
            reader.report("\"\(text)\" has no host", at: node)
            return nil
        }
        guard url.user == nil, url.password == nil else {
            reader.report("credentials do not belong in the URL, where they would show in logs and status", at: node)
            return nil
        }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        guard (1...65535).contains(port) else {
            reader.report("port \(port) is out of range 1-65535", at: node)
            return nil
        }
        return HTTPCheck(url: text, endpoint: HostPort(host: host, port: port), expectation: expectation)
    }

    /// `host:port`, or `[v6]:port`. Port 0 (any free port) suits only a listening address.
    mutating func hostPort(_ node: ConfigNode, expected: String, ports: ClosedRange<Int> = 1...65535) -> HostPort? {
        guard let text = reader.string(node, expected: expected) else { return nil }
        guard case let (host, portText?) = HostPort.split(text[...]) else {
            reader.report("\"\(text)\" is not \(expected) (write IPv6 addresses in brackets: [::1]:80)", at: node)
            return nil
        }
        guard !host.isEmpty, let port = Int(portText), ports.contains(port) else {
            reader.report("\"\(text)\" is not \(expected), with a port from \(ports.lowerBound) to 65535", at: node)
            return nil
        }
        return HostPort(host: String(host), port: port)
    }
}
