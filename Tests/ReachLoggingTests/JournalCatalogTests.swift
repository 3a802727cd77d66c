import Foundation
import ReachCore
import ReachLogging
import Testing

/// `systemd/reachd.catalog` explains exactly the events reachd sends, under the same ids.
@Suite("Journal catalog")
struct JournalCatalogTests {
    struct Entry {
        var id: String
        var headers: [String: String] = [:]
        var body = ""
    }

    static func entries() throws -> [Entry] {
        let file = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appending(path: "systemd/reachd.catalog")
        var entries: [Entry] = []
        var inHeaders = false
        for line in try String(contentsOf: file, encoding: .utf8).split(
            separator: "\n",
            omittingEmptySubsequences: false
        ) {
            if line.hasPrefix("-- ") {
                entries.append(Entry(id: String(line.dropFirst(3))))
                inHeaders = true
            } else if line.hasPrefix("#"), entries.isEmpty || inHeaders {
                continue
            } else if inHeaders, let colon = line.firstIndex(of: ":") {
                entries[entries.count - 1].headers[String(line[..<colon])] = line[line.index(after: colon)...]
                    .trimmingCharacters(in: .whitespaces)
            } else if !entries.isEmpty {
                inHeaders = false
                entries[entries.count - 1].body += line + "\n"
            }
        }
        return entries
    }

    @Test func oneEntryPerEventWithTheIDTheHandlerSends() throws {
        let entries = try Self.entries()
        let ids = entries.map(\.id)
        #expect(ids.count == Set(ids).count, "duplicate ids: \(ids)")
        #expect(Set(ids) == Set(ReachLogEvent.allCases.map(\.journalMessageID)))
        #expect(entries.count == ReachLogEvent.allCases.count)
    }

    @Test func everyEntryHasTheHeadersAndAnExplanation() throws {
        for entry in try Self.entries() {
            #expect(entry.id.count == 32 && entry.id.allSatisfy { $0.isHexDigit && !$0.isUppercase }, "\(entry.id)")
            #expect(entry.headers["Subject"]?.isEmpty == false, "\(entry.id)")
            #expect(entry.headers["Defined-By"] == "reachd", "\(entry.id)")
            #expect(entry.headers["Support"]?.isEmpty == false, "\(entry.id)")
            #expect(
                entry.body.trimmingCharacters(in: .whitespacesAndNewlines).count > 40,
                "\(entry.id) explains what happened"
            )
        }
    }
}
