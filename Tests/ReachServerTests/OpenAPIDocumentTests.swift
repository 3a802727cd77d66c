import Foundation
import ReachCore
@testable import ReachServer
import ReachTesting
import Testing

/// Keeps `Sources/ReachServer/openapi.yaml` honest: every route and every JSON key the code
/// produces is described there.
@Suite("openapi.yaml matches the code")
struct OpenAPIDocumentTests {
    private static let text: String = {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/ReachServer/openapi.yaml")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }()

    /// The lines of the block that starts with `header` (at its indentation), up to the next line
    /// at the same or a shallower indentation.
    private func block(_ header: String, in lines: [Substring]) -> [Substring] {
        guard let start = lines.firstIndex(where: { $0 == header }) else { return [] }
        let indent = header.prefix { $0 == " " }.count
        var result: [Substring] = []
        for line in lines[(start + 1)...] {
            let lineIndent = line.prefix { $0 == " " }.count
            if !line.trimmingCharacters(in: .whitespaces).isEmpty, lineIndent <= indent { break }
            result.append(line)
        }
        return result
    }

    @Test func everyRouteAndMethodIsDescribed() throws {
        let lines = Self.text.split(separator: "\n")
        #expect(lines.first == "openapi: 3.0.3")
        for (path, methods) in StatusServer.routes {
            let item = block("  \(path):", in: lines)
            #expect(!item.isEmpty, "\(path) is missing")
            for method in methods {
                #expect(item.contains { $0 == "    \(method.rawValue.lowercased()):" }, "\(method) \(path) is missing")
            }
        }
    }

    @Test func everyKeyOfTheStatusDocumentIsInTheSchema() throws {
        let lines = Self.text.split(separator: "\n")
        let target = TargetStatus(name: "a", kind: "http", lastResult: .ok("a"))
        let event = ConnectivityEvent(sequence: 1, verdict: Verdict(state: .connected, reason: .healthy, since: WallTime(sinceEpoch: .zero), targets: [target]))
        let data = Data(JSONBody.encode(StatusDocument(event: event, likelyConnected: true)).readableBytesView)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let targetObject = try #require((object["targets"] as? [[String: Any]])?.first)
        let timings = try #require(targetObject["timings"] as? [String: Any])
        for (schema, keys) in [("StatusDocument", object.keys), ("TargetStatus", targetObject.keys), ("Timings", timings.keys)] {
            let properties = block("      properties:", in: block("    \(schema):", in: lines))
            let described = Set(properties.filter { $0.hasPrefix("        ") && !$0.hasPrefix("         ") }.map { $0.trimmingCharacters(in: .whitespaces).dropLast() })
            #expect(described == Set(keys.map { Substring($0) }), "\(schema) properties")
        }
    }
}
