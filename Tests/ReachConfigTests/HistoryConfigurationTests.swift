import ReachConfig
import ReachCore
import Testing

@Suite("Configuration: history")
struct HistoryConfigurationTests {
    @Test func historyIsOnByDefaultInTheStateDirectory() throws {
        let history = try DaemonConfiguration.load(from: .embeddedDefault).history
        #expect(history == HistorySettings())
        #expect(history.resolvedPath(environment: [:]) == ("/var/lib/reachd/history.sqlite", false))
        #expect(
            history.resolvedPath(environment: ["STATE_DIRECTORY": "/var/lib/reachd:/var/lib/other"]) == (
                "/var/lib/reachd/history.sqlite", false
            )
        )
        #expect(
            history.resolvedPath(environment: ["STATE_DIRECTORY": "/srv/state"]).path == "/srv/state/history.sqlite"
        )
    }

    @Test func everyKeyIsRead() throws {
        let configuration = try DaemonConfiguration.parse(
            "history: { enabled: false, path: /srv/h.sqlite, retention: 30d, max_size: 1GiB }\n\(oneTarget)",
            source: "t.yaml"
        )
        #expect(
            configuration.history
                == HistorySettings(
                    enabled: false,
                    path: "/srv/h.sqlite",
                    retention: .seconds(30 * 86_400),
                    maximumSize: 1 << 30
                )
        )
        #expect(configuration.history.resolvedPath(environment: ["STATE_DIRECTORY": "/x"]) == ("/srv/h.sqlite", true))
        #expect(
            try DaemonConfiguration.parse("history: { max_size: 500MB }\n\(oneTarget)", source: "t.yaml").history
                .maximumSize
                == 500_000_000
        )
    }

    @Test func badValuesAreProblems() {
        expectProblem(
            "history: { path: history.sqlite }\n\(oneTarget)",
            at: "history.path",
            line: 1,
            saying: "absolute file path"
        )
        expectProblem(
            "history: { retention: 10m }\n\(oneTarget)",
            at: "history.retention",
            line: 1,
            saying: "out of range"
        )
        expectProblem(
            "history: { max_size: lots }\n\(oneTarget)",
            at: "history.max_size",
            line: 1,
            saying: "a size like 256MiB"
        )
        expectProblem(
            "history: { max_size: 100KiB }\n\(oneTarget)",
            at: "history.max_size",
            line: 1,
            saying: "from 1MiB to 1TiB"
        )
        expectProblem("history: { keep: 1d }\n\(oneTarget)", at: "history.keep", line: 1, saying: "unknown key")
    }
}
