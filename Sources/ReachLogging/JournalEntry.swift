import Logging
import ReachCore

/// One log line as journal fields, ready for `sd_journal_sendv_with_location`.
struct JournalEntry: Sendable {
    /// `NAME=value` pairs; the names are valid journal field names.
    var fields: [(name: String, value: String)]
    /// The `CODE_*` location, which the libsystemd call takes apart from the fields.
    var file: String
    var line: UInt
    var function: String

    /// - Parameters:
    ///   - event: A line whose metadata is already complete (the handler's, the provider's, the line's).
    ///   - names: Field names already made for metadata keys; grown here, so each key is made valid once.
    init(_ event: LogEvent, identifier: String, names: inout FieldNameCache) {
        var fields: [(name: String, value: String)] = [
            ("MESSAGE", "\(event.message)"),
            ("PRIORITY", "\(Self.priority(event.level))"),
            ("SYSLOG_IDENTIFIER", identifier),
        ]
        let metadata = event.metadata ?? [:]
        if case .string(let kind) = metadata[ReachLogEvent.metadataKey], let known = ReachLogEvent(rawValue: kind) {
            fields.append(("MESSAGE_ID", known.journalMessageID))
        }
        for key in metadata.keys.sorted() {
            fields.append((names.name(for: key), Self.render(metadata[key]!)))
        }
        if let error = event.error { fields.append((names.name(for: "error"), "\(error)")) }
        self.fields = fields
        self.file = event.file
        self.line = event.line
        self.function = event.function
    }

    /// syslog's priorities: swift-log's trace and debug are both `debug` (7).
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// The same flattening as the logfmt lines: arrays joined with `,`, dictionaries as `key:value`.
    static func render(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let string): string
        case .stringConvertible(let convertible): convertible.description
        case .array(let array): array.map(render).joined(separator: ",")
        case .dictionary(let dictionary):
            dictionary.keys.sorted().map { "\($0):\(render(dictionary[$0]!))" }.joined(separator: ",")
        }
    }
}

/// Journal field names for metadata keys, each made once and kept (up to a bound, since a key may
/// be built at run time).
struct FieldNameCache {
    private var names: [String: String] = [:]
    private static let capacity = 512

    mutating func name(for key: String) -> String {
        if let name = names[key] { return name }
        let name = JournalFieldName.forMetadataKey(key)
        if names.count < Self.capacity { names[key] = name }
        return name
    }
}
