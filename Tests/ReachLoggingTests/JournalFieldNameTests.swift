import Foundation
import ReachCore
import ReachLogging
import Testing

/// journald drops a field with an invalid name without a word: every name reachd sends must be valid.
@Suite("Journal field names")
struct JournalFieldNameTests {
    static let sources = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
        .appending(path: "Sources")

    /// Every metadata key written in reachd's sources: dictionary keys with a value
    /// (`"key": "\(…)"` or `"key": .string(…)`), `metadata["key"]` and `metadataKey: "key"`.
    static func loggedKeys() throws -> Set<String> {
        let patterns = [
            #""([A-Za-z_][A-Za-z0-9_.\-]*)":\s*(?:"|\.string|\.stringConvertible|\.array|\.dictionary)"#,
            #"metadata\["([^"]+)"\]"#,
            #"metadataKey: "([^"]+)""#,
        ].map { try! NSRegularExpression(pattern: $0) }
        var keys: Set<String> = []
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)!
        for case let file as URL in files
        where file.pathExtension == "swift" && !file.path.contains("/GRPCHealthProto/") {
            let text = try String(contentsOf: file, encoding: .utf8)
            let range = NSRange(text.startIndex..., in: text)
            for pattern in patterns {
                for match in pattern.matches(in: text, range: range) {
                    keys.insert(String(text[Range(match.range(at: 1), in: text)!]))
                }
            }
        }
        keys.insert(ReachLogEvent.metadataKey)
        return keys.filter { !$0.contains("\\(") }  // an interpolated value, not a key
    }

    @Test func everyKeyReachdLogsMapsToAValidDistinctName() throws {
        let keys = try Self.loggedKeys()
        #expect(
            keys.isSuperset(of: [
                "state", "reason", "sequence", "interfaces", "target", "error", "event", "receiveBuffer",
            ]),
            "\(keys.sorted())"
        )
        var owners: [String: String] = [:]
        for key in keys {
            let name = JournalFieldName.forMetadataKey(key)
            #expect(JournalFieldName.isValid(name), "\(key) → \(name)")
            #expect(name.hasPrefix("REACHD_"))
            if let other = owners[name] { Issue.record("\(key) and \(other) both become \(name)") }
            owners[name] = key
        }
    }

    @Test(arguments: [
        ("state", "REACHD_STATE"), ("previous_state", "REACHD_PREVIOUS_STATE"), ("reason", "REACHD_REASON"),
        ("target", "REACHD_TARGET"), ("interface", "REACHD_INTERFACE"), ("interfaces", "REACHD_INTERFACES"),
        ("latency_ms", "REACHD_LATENCY_MS"), ("sequence", "REACHD_SEQUENCE"),
        ("receiveBuffer", "REACHD_RECEIVE_BUFFER"),
        ("http_status", "REACHD_HTTP_STATUS"), ("a.b-c", "REACHD_A_B_C"), ("__x__", "REACHD_X"), ("ünï", "REACHD_N"),
        ("", "REACHD_FIELD"), ("...", "REACHD_FIELD"), ("9lives", "REACHD_9LIVES"), ("HTTPCode", "REACHD_HTTPCODE"),
    ])
    func namesFollowTheKey(key: String, name: String) {
        #expect(JournalFieldName.forMetadataKey(key) == name)
    }

    @Test func anyKeyBecomesAValidName() {
        let awkward = [
            "_private", "1", String(repeating: "long_key_", count: 20), "tab\there", "emoji😀", "UPPER",
            "mixed Case-and.dots", "\u{0}", "a__b",
        ]
        for key in awkward {
            let name = JournalFieldName.forMetadataKey(key)
            #expect(JournalFieldName.isValid(name), "\(key) → \(name)")
        }
        #expect(
            JournalFieldName.forMetadataKey(String(repeating: "x", count: 100)).utf8.count
                == JournalFieldName.maximumLength
        )
    }

    @Test func validityFollowsJournald() {
        #expect(JournalFieldName.isValid("MESSAGE_ID"))
        #expect(JournalFieldName.isValid("REACHD_9"))
        #expect(!JournalFieldName.isValid("_PID"), "protected fields are journald's own")
        #expect(!JournalFieldName.isValid("9A"))
        #expect(!JournalFieldName.isValid("lower"))
        #expect(!JournalFieldName.isValid(""))
        #expect(!JournalFieldName.isValid(String(repeating: "A", count: 65)))
        #expect(JournalFieldName.isValid(String(repeating: "A", count: 64)))
    }
}
