import Logging
import ReachLogging
import Synchronization
import Testing

@Suite("Logfmt log lines")
struct LogfmtLogHandlerTests {
    final class Lines: Sendable {
        private let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    func logger(level: Logger.Level = .info) -> (Logger, Lines) {
        let lines = Lines()
        let logger = Logger(label: "reachd") { LogfmtLogHandler(label: $0, level: level, write: lines.append) }
        return (logger, lines)
    }

    @Test func oneLineWithTimestampLevelMessageAndSortedFields() throws {
        let (logger, lines) = logger()
        logger.warning(
            "disconnected: connection_refused (target server)",
            metadata: ["state": "disconnected", "reason": "connection_refused", "sequence": "7"]
        )
        let line = try #require(lines.all.first)
        #expect(line.hasSuffix("\n"))
        #expect(line.split(separator: "\n").count == 1)
        #expect(line.hasPrefix("ts=20"))
        #expect(
            line.contains(
                " level=warning logger=reachd msg=\"disconnected: connection_refused (target server)\" reason=connection_refused sequence=7 state=disconnected\n"
            )
        )
    }

    @Test func valuesAreQuotedAndEscapedOnlyWhenNeeded() throws {
        let (logger, lines) = logger()
        logger.info(
            "x",
            metadata: [
                "plain": "eth0", "spaced": "a b", "quote": "say \"hi\"", "newline": "1\n2", "empty": "",
                "equals": "a=b", "list": ["eth0", "wlan0"],
            ]
        )
        let line = try #require(lines.all.first)
        #expect(line.contains(" empty=\"\" "))
        #expect(line.contains(" equals=\"a=b\" "))
        #expect(line.contains(" list=eth0,wlan0 "))
        #expect(line.contains(" newline=\"1\\n2\" "))
        #expect(line.contains(" plain=eth0 "))
        #expect(line.contains(" quote=\"say \\\"hi\\\"\" "))
        #expect(line.contains(" spaced=\"a b\"\n"))
    }

    @Test func levelsBelowTheThresholdAreDropped() {
        let (logger, lines) = logger(level: .notice)
        logger.info("quiet")
        logger.debug("quieter")
        logger.notice("heard")
        #expect(lines.all.count == 1)
        #expect(lines.all.first?.contains("msg=heard") == true)
    }
}
