import ReachPOSIX
import ReachSupport

/// Reads a web configuration file (``WebConfiguration``) with the keys exporter-toolkit defines,
/// every problem named by the file, its line and the key, as the main configuration's are.
///
/// Keys exporter-toolkit knows but reachd does not apply (cipher suites, curves, HTTP/2, headers,
/// allowed SANs, rate limits) are refused by name rather than ignored: a file that asks for a
/// restriction must not be served without it.
struct WebConfigurationParser {
    static let rootKeys = ["tls_server_config", "basic_auth_users"]
    static let tlsKeys = ["cert_file", "key_file", "client_ca_file", "client_auth_type", "min_version", "max_version"]
    static let unsupportedKeys = [
        "http_server_config", "rate_limit",
        "tls_server_config.cipher_suites", "tls_server_config.curve_preferences",
        "tls_server_config.prefer_server_cipher_suites",
        "tls_server_config.client_allowed_sans", "tls_server_config.cert", "tls_server_config.key",
        "tls_server_config.client_ca",
    ]

    var reader: ConfigReader
    let path: String

    /// Reads and checks the file at `path`; problems, if any, are in ``reader``.
    static func parse(_ path: String) -> (WebConfiguration?, [ConfigurationProblem]) {
        var parser = WebConfigurationParser(reader: ConfigReader(source: path), path: path)
        let configuration = parser.document()
        return parser.reader.problems.isEmpty ? (configuration, []) : (nil, parser.reader.problems)
    }

    mutating func document() -> WebConfiguration? {
        let text: String
        switch BoundedFile.readText(path, limit: BoundedFile.textLimit) {
        case .success(let read): text = read
        case .failure(let failure):
            reader.report("cannot read the web configuration file: \(failure)", path: "")
            return nil
        }
        let root: YAMLNode
        do {
            root = try YAMLComposer.compose(text) ?? .emptyMapping
        } catch {
            reader.report("cannot parse YAML: \(error)", path: "")
            return nil
        }
        let node = ConfigNode(node: root, path: "")
        guard
            let entries = reader.mapping(node, keys: Self.rootKeys + Self.unsupportedKeys.filter { !$0.contains(".") })
        else { return nil }
        refuseUnsupported(entries)
        var configuration = WebConfiguration(path: path)
        if let tlsNode = entries["tls_server_config"] {
            configuration.tls = serverTLS(tlsNode)
        }
        if let usersNode = entries["basic_auth_users"] {
            configuration.basicAuthUsers = users(usersNode)
        }
        return configuration
    }

    mutating func refuseUnsupported(_ entries: [String: ConfigNode]) {
        for (key, node) in entries where Self.unsupportedKeys.contains(node.path) {
            reader.report("\(key) is an exporter-toolkit setting reachd does not support; remove it", at: node)
        }
    }

    mutating func serverTLS(_ node: ConfigNode) -> WebConfiguration.ServerTLS? {
        let unsupported = Self.unsupportedKeys.filter { $0.hasPrefix("tls_server_config.") }.map {
            String($0.dropFirst("tls_server_config.".count))
        }
        guard let entries = reader.mapping(node, keys: Self.tlsKeys + unsupported) else { return nil }
        refuseUnsupported(entries)
        let certificate = file(entries["cert_file"], named: "cert_file", in: node, holding: "CERTIFICATE")
        let key = file(entries["key_file"], named: "key_file", in: node, holding: "PRIVATE KEY")
        let clientCA = entries["client_ca_file"].flatMap {
            file($0, named: "client_ca_file", in: node, holding: "CERTIFICATE")
        }
        var clientAuth = WebConfiguration.ClientAuth.noClientCert
        if let authNode = entries["client_auth_type"] {
            // exporter-toolkit still accepts the older name RequireClientCert.
            if case .scalar(let scalar) = authNode.node, scalar.string == "RequireClientCert" {
                clientAuth = .requireAnyClientCert
            } else if let word = reader.choice(authNode, of: WebConfiguration.ClientAuth.allCases.map(\.rawValue)) {
                clientAuth = WebConfiguration.ClientAuth(rawValue: word) ?? .noClientCert
            } else {
                return nil
            }
        }
        if let caNode = entries["client_ca_file"], clientAuth == .noClientCert {
            reader.report(
                "client_ca_file is set but client_auth_type is NoClientCert: set client_auth_type, such as RequireAndVerifyClientCert",
                at: caNode
            )
        }
        if clientAuth.verifies, entries["client_ca_file"] == nil {
            reader.report(
                "client_auth_type \(clientAuth.rawValue) needs client_ca_file: the CAs client certificates are verified against",
                at: entries["client_auth_type"] ?? node
            )
        }
        let minimum = entries["min_version"].map { version($0) } ?? .tls12
        let maximum = entries["max_version"].map { version($0) }
        if let minimum, let maximum = maximum ?? nil, maximum < minimum, let maxNode = entries["max_version"] {
            reader.report("max_version \(maximum.rawValue) is older than min_version \(minimum.rawValue)", at: maxNode)
        }
        guard let certificate, let key, let minimum, maximum != .some(nil),
            clientCA != nil || entries["client_ca_file"] == nil
        else { return nil }
        return WebConfiguration.ServerTLS(
            certificateFile: certificate.path,
            keyFile: key.path,
            clientCAFile: clientCA?.path,
            clientAuth: clientAuth,
            minimumVersion: minimum,
            maximumVersion: maximum ?? nil,
            contents: [certificate.text, key.text, clientCA?.text ?? ""]
        )
    }

    mutating func version(_ node: ConfigNode) -> WebConfiguration.TLSVersion? {
        reader.choice(node, of: WebConfiguration.TLSVersion.allCases.map(\.rawValue)).flatMap(
            WebConfiguration.TLSVersion.init(rawValue:)
        )
    }

    /// A PEM file the key names: made absolute against the web configuration's folder, read, and
    /// checked to hold a `BEGIN <kind>` block.
    mutating func file(
        _ node: ConfigNode?,
        named key: String,
        in parent: ConfigNode,
        holding kind: String
    ) -> (path: String, text: String)? {
        guard let node else {
            reader.report("missing \(key): the PEM file tls_server_config needs", at: parent)
            return nil
        }
        guard let written = reader.string(node, expected: "the path of a PEM file") else { return nil }
        let directory = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
        let resolved = written.hasPrefix("/") ? written : "\(directory.isEmpty ? "/" : directory)/\(written)"
        switch BoundedFile.readText(resolved, limit: BoundedFile.textLimit) {
        case .success(let text):
            guard text.contains("-----BEGIN "), text.contains("\(kind)-----") else {
                reader.report("\(resolved) holds no PEM \(kind.lowercased()) (-----BEGIN ...\(kind)-----)", at: node)
                return nil
            }
            return (resolved, text)
        case .failure(let failure):
            reader.report("cannot read \(resolved): \(failure)", at: node)
            return nil
        }
    }

    mutating func users(_ node: ConfigNode) -> [String: Secret] {
        guard case .mapping(let mapping) = node.node else {
            reader.report("expected a mapping of user names to bcrypt hashes, found \(node.summary)", at: node)
            return [:]
        }
        var users: [String: Secret] = [:]
        for (keyNode, valueNode) in mapping {
            guard case .scalar(let name) = keyNode, !name.string.isEmpty, !name.string.contains(":") else {
                reader.report("user names are plain names without \":\"", path: node.path, mark: keyNode.mark)
                continue
            }
            let value = ConfigNode(node: valueNode, path: node.child(name.string))
            guard let hash = reader.string(value, expected: "a bcrypt hash, like htpasswd -nBC 10 \"\" writes") else {
                continue
            }
            guard Self.isBcryptHash(hash) else {
                reader.report(
                    "not a bcrypt hash ($2y$10$ and 53 more characters, as htpasswd -nBC 10 \"\" writes)",
                    at: value
                )
                continue
            }
            users[name.string] = Secret(hash)
        }
        return users
    }

    /// `$2a$`, `$2b$` or `$2y$`, a two-digit cost from 04 to 31, `$`, then 53 characters of bcrypt's base 64.
    static func isBcryptHash(_ hash: String) -> Bool {
        let bytes = Array(hash.utf8)
        guard bytes.count == 60, hash.hasPrefix("$2a$") || hash.hasPrefix("$2b$") || hash.hasPrefix("$2y$"),
            bytes[6] == UInt8(ascii: "$"),
            let cost = Int(String(decoding: bytes[4..<6], as: UTF8.self)), (4...31).contains(cost)
        else { return false }
        return bytes[7...].allSatisfy {
            $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "/") || ($0 >= 0x30 && $0 <= 0x39)
                || (($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x7a)
        }
    }
}
