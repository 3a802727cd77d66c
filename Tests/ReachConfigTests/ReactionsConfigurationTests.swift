import Foundation
import ReachConfig
import ReachCore
import ReachSupport
import ReachTesting
import Testing

/// The `hooks` and `webhooks` sections: defaults, values, and a problem for every mistake, each at its key path.
@Suite("Configuration: hooks and webhooks")
struct ReactionsConfigurationTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory("config")
        try "webhook-s3cret\n".write(toFile: "\(directory)/secret", atomically: true, encoding: .utf8)
        try "\n".write(toFile: "\(directory)/empty", atomically: true, encoding: .utf8)
    }

    @Test func withoutTheSectionsHooksUseTheDispatcherStyleDirectoriesAndThereAreNoWebhooks() throws {
        let configuration = try DaemonConfiguration.parse(oneTarget, source: "t.yaml")
        #expect(configuration.hooks == HookSettings())
        #expect(configuration.hooks.restoredDirectory == "/etc/reachd/restored.d")
        #expect(configuration.hooks.lostDirectory == "/etc/reachd/lost.d")
        #expect(configuration.webhooks.isEmpty)
    }

    @Test func theSectionsAreRead() throws {
        let configuration = try DaemonConfiguration.parse(
            oneTarget + """
                hooks: { restored_dir: /srv/up.d, lost_dir: /srv/down.d, timeout: 45s, kill_grace: 2s }
                webhooks:
                  - name: ops
                    url: https://ops.example.com/reachd
                    events: [restored]
                    secret_file: \(directory)/secret
                    timeout: 3s
                    give_up_after: 10m
                  - { name: audit, url: "http://10.0.0.9:8080/in", secret_credential: secret }
                """,
            source: "t.yaml",
            environment: ["CREDENTIALS_DIRECTORY": directory.path]
        )
        #expect(
            configuration.hooks
                == HookSettings(
                    restoredDirectory: "/srv/up.d",
                    lostDirectory: "/srv/down.d",
                    timeout: .seconds(45),
                    killGrace: .seconds(2)
                )
        )
        #expect(
            configuration.webhooks == [
                WebhookSettings(
                    name: "ops",
                    url: "https://ops.example.com/reachd",
                    events: [.restored],
                    secret: Secret("webhook-s3cret"),
                    timeout: .seconds(3),
                    giveUpAfter: .seconds(600)
                ),
                WebhookSettings(
                    name: "audit",
                    url: "http://10.0.0.9:8080/in",
                    events: [.restored, .lost],
                    secret: Secret("webhook-s3cret")
                ),
            ]
        )
    }

    @Test func everyMistakeIsAProblemAtItsKeyPath() {
        expectProblem(
            oneTarget + "hooks: { restored_dir: relative/dir }\n",
            at: "hooks.restored_dir",
            line: 4,
            saying: "absolute directory path"
        )
        expectProblem(
            oneTarget + "hooks: { timeout: 2h }\n",
            at: "hooks.timeout",
            line: 4,
            saying: "expected from 100ms to 1h"
        )
        expectProblem(
            oneTarget + "hooks: { timout: 2s }\n",
            at: "hooks.timout",
            line: 4,
            saying: "did you mean \"timeout\""
        )
        expectProblem(
            oneTarget + "webhooks:\n  - { url: http://h/ }\n",
            at: "webhooks[0]",
            line: 5,
            saying: "missing name"
        )
        expectProblem(oneTarget + "webhooks:\n  - { name: x }\n", at: "webhooks[0]", line: 5, saying: "missing url")
        expectProblem(
            oneTarget + "webhooks:\n  - { name: \"a b\", url: http://h/ }\n",
            at: "webhooks[0].name",
            line: 5,
            saying: "not a valid name"
        )
        expectProblem(
            oneTarget + "webhooks:\n  - { name: x, url: ftp://h/ }\n",
            at: "webhooks[0].url",
            line: 5,
            saying: "not an http or https URL"
        )
        expectProblem(
            oneTarget + "webhooks:\n  - { name: x, url: \"http://u:p@h/\" }\n",
            at: "webhooks[0].url",
            line: 5,
            saying: "credentials do not belong"
        )
        expectProblem(
            oneTarget + "webhooks:\n  - { name: x, url: http://h/, events: [restored, gained] }\n",
            at: "webhooks[0].events[1]",
            line: 5,
            saying: "not one of restored, lost"
        )
        expectProblem(
            oneTarget + "webhooks:\n  - { name: x, url: http://h/, events: [] }\n",
            at: "webhooks[0].events",
            line: 5,
            saying: "at least one"
        )
        expectProblem(
            oneTarget + "webhooks:\n  - { name: x, url: http://h/, secret_file: /nonexistent }\n",
            at: "webhooks[0].secret_file",
            line: 5,
            saying: "cannot read the secret"
        )
        expectProblem(
            oneTarget + "webhooks:\n  - { name: x, url: http://h/, secret_file: \(directory)/empty }\n",
            at: "webhooks[0].secret_file",
            line: 5,
            saying: "is empty"
        )
        expectProblem(
            oneTarget + "webhooks:\n  - { name: x, url: http://h/, secret_credential: s }\n",
            at: "webhooks[0].secret_credential",
            line: 5,
            saying: "$CREDENTIALS_DIRECTORY is not set"
        )
        expectProblem(
            oneTarget + "webhooks:\n  - { name: x, url: http://h/, give_up_after: 500ms }\n",
            at: "webhooks[0].give_up_after",
            line: 5,
            saying: "expected from 1s to 24h"
        )
        expectProblem(
            oneTarget + "webhooks:\n  - { name: x, url: http://h/ }\n  - { name: x, url: http://i/ }\n",
            at: "webhooks[1]",
            line: 6,
            saying: "duplicate webhook name"
        )
    }

    @Test func theSecretNeverAppearsInAProblemOrTheConfigurationsDescription() throws {
        let configuration = try DaemonConfiguration.parse(
            oneTarget + "webhooks:\n  - { name: x, url: http://h/, secret_file: \(directory)/secret }\n",
            source: "t.yaml"
        )
        #expect(!"\(configuration)".contains("webhook-s3cret"))
        #expect(configuration.webhooks.first?.secret?.revealed == "webhook-s3cret")
    }
}
