import FoundationEssentials
import ReachCore
import ReachSupport
import Yams

#if canImport(Glibc)
import Glibc
#endif

/// The `hooks` and `webhooks` sections.
///
/// ```yaml
/// hooks: { restored_dir: /etc/reachd/restored.d, lost_dir: /etc/reachd/lost.d, timeout: 30s }
/// webhooks:
///   - { name: ops, url: "https://ops.example.com/reachd", events: [restored, lost], secret_file: /etc/reachd/ops.secret }
/// ```
extension ConfigurationParser {
    static let reactionKeys = ["hooks", "webhooks"]
    static let hookKeys = ["restored_dir", "lost_dir", "timeout", "kill_grace"]
    static let webhookKeys = ["name", "url", "events", "secret_file", "secret_credential", "timeout", "give_up_after"]
    static let hookTimeoutRange = Duration.milliseconds(100)...Duration.seconds(3600)
    static let killGraceRange = Duration.zero...Duration.seconds(60)
    static let webhookTimeoutRange = Duration.milliseconds(100)...Duration.seconds(300)
    static let giveUpRange = Duration.seconds(1)...Duration.seconds(86400)

    /// What the two sections configure.
    struct Reactions {
        var hooks = HookSettings()
        var webhooks: [WebhookSettings] = []
    }

    mutating func parseReactions(_ entries: [String: ConfigNode]) -> Reactions {
        var reactions = Reactions()
        if let node = entries["hooks"], let hooks = reader.mapping(node, keys: Self.hookKeys) {
            if let dir = hooks["restored_dir"].flatMap({ absolutePath($0) }) { reactions.hooks.restoredDirectory = dir }
            if let dir = hooks["lost_dir"].flatMap({ absolutePath($0) }) { reactions.hooks.lostDirectory = dir }
            if let timeout = hooks["timeout"].flatMap({ reader.duration($0, in: Self.hookTimeoutRange) }) {
                reactions.hooks.timeout = timeout
            }
            if let grace = hooks["kill_grace"].flatMap({ reader.duration($0, in: Self.killGraceRange) }) {
                reactions.hooks.killGrace = grace
            }
        }
        if let node = entries["webhooks"], let items = reader.sequence(node) {
            var seen: Set<String> = []
            for item in items {
                guard let webhook = parseWebhook(item) else { continue }
                if seen.insert(webhook.name).inserted {
                    reactions.webhooks.append(webhook)
                } else {
                    reader.report("duplicate webhook name \"\(webhook.name)\"", at: item)
                }
            }
        }
        return reactions
    }

    private mutating func parseWebhook(_ node: ConfigNode) -> WebhookSettings? {
        guard let entries = reader.mapping(node, keys: Self.webhookKeys) else { return nil }
        if entries["name"] == nil {
            reader.report("missing name: every webhook needs a unique name, used in logs and metrics", at: node)
        }
        if entries["url"] == nil {
            reader.report("missing url: where to POST, like https://ops.example.com/reachd", at: node)
        }
        let name = entries["name"].flatMap { webhookName($0) }
        let url = entries["url"].flatMap { webhookURL($0) }
        var events: Set<TransitionDirection> = [.restored, .lost]
        if let eventsNode = entries["events"] {
            let items: [ConfigNode] =
                if case .sequence = eventsNode.node { reader.sequence(eventsNode) ?? [] } else { [eventsNode] }
            let chosen = items.compactMap {
                reader.choice($0, of: TransitionDirection.allCases.map(\.rawValue)).flatMap(
                    TransitionDirection.init(rawValue:)
                )
            }
            if items.isEmpty {
                reader.report("expected at least one of restored, lost", at: eventsNode)
            } else if chosen.count == items.count {
                events = Set(chosen)
            }
        }
        let secret = webhookSecret(entries)
        let timeout = entries["timeout"].flatMap { reader.duration($0, in: Self.webhookTimeoutRange) } ?? .seconds(10)
        let giveUpAfter =
            entries["give_up_after"].flatMap { reader.duration($0, in: Self.giveUpRange) } ?? .seconds(300)
        guard let name, let url else { return nil }
        return WebhookSettings(
            name: name,
            url: url,
            events: events,
            secret: secret,
            timeout: timeout,
            giveUpAfter: giveUpAfter
        )
    }

    private mutating func webhookName(_ node: ConfigNode) -> String? {
        guard let name = reader.string(node, expected: "a name") else { return nil }
        let allowed =
            !name.isEmpty && name.count <= 64
            && name.unicodeScalars.allSatisfy {
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0))
            }
        guard allowed else {
            reader.report(
                "\"\(name)\" is not a valid name: use up to 64 letters, digits, \"-\", \"_\" or \".\"",
                at: node
            )
            return nil
        }
        return name
    }

    private mutating func webhookURL(_ node: ConfigNode) -> String? {
        guard let text = reader.string(node, expected: "a URL like https://ops.example.com/reachd") else { return nil }
        guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https",
            !(url.hostAsWritten ?? "").isEmpty
        else {
            reader.report("\"\(text)\" is not an http or https URL like https://ops.example.com/reachd", at: node)
            return nil
        }
        guard url.user == nil, url.password == nil else {
            reader.report(
                "credentials do not belong in the URL, where they would show in logs: sign with secret_file instead",
                at: node
            )
            return nil
        }
        return text
    }

    /// The signing secret, read now so that a missing file is a problem at start, not unsigned POSTs later.
    private mutating func webhookSecret(_ entries: [String: ConfigNode]) -> Secret? {
        readSecret(entries, fileKey: "secret_file", credentialKey: "secret_credential", noun: "secret", oneLine: false)
    }

    private mutating func absolutePath(_ node: ConfigNode) -> String? {
        guard let path = reader.string(node, expected: "an absolute directory path, like /etc/reachd/restored.d") else {
            return nil
        }
        guard path.hasPrefix("/") else {
            reader.report("expected an absolute directory path, like /etc/reachd/restored.d", at: node)
            return nil
        }
        return path
    }
}

extension DaemonConfiguration {
    /// This configuration with the `hooks` and `webhooks` sections applied.
    func with(_ reactions: ConfigurationParser.Reactions) -> DaemonConfiguration {
        var configuration = self
        configuration.hooks = reactions.hooks
        configuration.webhooks = reactions.webhooks
        return configuration
    }
}
