import ReachTesting
import Testing

@testable import ReachConfig

/// `ImplicitTag` stands in for Yams' default resolver, so it must agree with it on every plain
/// scalar, and the resolver is here to ask (``YamsOracle``).
@Suite("Implicit YAML tags")
struct ImplicitTagTests {
    static let written = [
        "", "~", "null", "Null", "NULL", "nULL", "true", "True", "TRUE", "tRUE", "yes", "no", "on", "Off", "y", "n",
        "0", "-0", "+0", "00", "07", "08", "0o7", "0o8", "0o", "0_", "0b101", "0b", "0b2", "0x1F", "0x", "0xg", "-0x_",
        "1", "12", "1_000", "+12", "-", "+", "1:20", "1:2:3", "1:60", "1:5", "0:20", "1:", ":1", "190:20:30",
        "1.5", "1.", ".5", ".", "._", "-.5", "1e5", "1E+5", "1.5e-3", "1e", ".5e3", ".5e+3", "1.2.3", "09", "1:20.5",
        "1:20.", "1:20.5e3", "0:20.5", ".inf", "-.inf", "+.INF", ".Inf", ".nan", "-.nan", ".NaN", "NaN", "inf",
        "127.0.0.1", "2s", "500ms", "1h", "api.example.com", "<<", "=", "2024-01-02", "١٢", "１２",
    ]

    /// Where `ImplicitTag` and Yams disagree among `texts`, except that timestamps, merge keys and
    /// `=` stay strings: no setting takes them, and the reader treats them as the strings they are
    /// written as.
    func disagreements(_ texts: [String]) async throws -> [String] {
        let stayStrings = ["tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:merge", "tag:yaml.org,2002:value"]
        let theirs = try await YamsOracle.answers("tag", for: texts)
        return zip(texts, theirs).filter { text, theirs in
            ImplicitTag.of(text).rawValue != (stayStrings.contains(theirs) ? YAMLTag.str.rawValue : theirs)
        }.map(\.0)
    }

    @Test func agreesWithYamsOnWrittenScalars() async throws {
        #expect(try await disagreements(Self.written) == [])
    }

    /// Every string of up to 6 characters over the rules' own alphabet, sampled with a fixed seed.
    @Test func agreesWithYamsOnGeneratedScalars() async throws {
        let alphabet = Array("0123456789_+-.:eEbox8aAfFinIN")
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var texts: [String] = []
        for _ in 0..<20_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let length = Int(state >> 61)
            var text = ""
            for position in 0..<length {
                text.append(alphabet[Int((state >> UInt64(position * 5 + 3)) & 0x1F) % alphabet.count])
            }
            texts.append(text)
        }
        let found = try await disagreements(texts)
        #expect(found.isEmpty, "\(found.prefix(20))")
    }
}
