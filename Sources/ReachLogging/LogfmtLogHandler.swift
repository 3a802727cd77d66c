import Logging
import ReachCore
import ReachPOSIX
import ReachSupport

#if canImport(Glibc)
import Glibc
#endif

/// Writes one logfmt line per event — `ts=… level=… msg="…" key=value …` — that both people and
/// `grep`/Loki/Vector read easily. Metadata keys are sorted so lines are stable.
package struct LogfmtLogHandler: LogHandler {
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?
    package var logLevel: Logger.Level

    private let label: String
    private let write: @Sendable (String) -> Void

    /// - Parameters:
    ///   - write: Receives each finished line, newline included; standard error by default.
    package init(
        label: String,
        level: Logger.Level,
        write: @escaping @Sendable (String) -> Void = LogfmtLogHandler.standardError
    ) {
        self.label = label
        self.logLevel = level
        self.write = write
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var fields = lineMetadata(for: event)
        if let error = event.error { fields["error"] = "\(error)" }

        var line =
            "ts=\(RFC3339.string(from: WallTime.now())) level=\(event.level.rawValue) logger=\(Self.quoted(label)) msg=\(Self.quoted("\(event.message)"))"
        for key in fields.keys.sorted() {
            line += " \(Self.key(key))=\(Self.quoted(Self.render(fields[key]!)))"
        }
        write(line + "\n")
    }

    /// Writes the whole line with one `write(2)`, so concurrent lines never interleave.
    package static let standardError: @Sendable (String) -> Void = { line in
        var line = line
        line.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(STDERR_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
                if written <= 0 {
                    if written < 0, errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }

    private static func render(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let string): string
        case .stringConvertible(let convertible): convertible.description
        case .array(let array): array.map(render).joined(separator: ",")
        case .dictionary(let dictionary):
            dictionary.keys.sorted().map { "\($0):\(render(dictionary[$0]!))" }.joined(separator: ",")
        }
    }

    /// Keys are bare words: anything else becomes `_`.
    private static func key(_ key: String) -> String {
        String(
            key.unicodeScalars.map {
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == "." || $0 == "-")
                    ? Character($0) : "_"
            }
        )
    }

    /// Bare when safe, else double-quoted with `\`, `"` and control characters escaped.
    static func quoted(_ value: String) -> String {
        let needsQuotes =
            value.isEmpty
            || value.unicodeScalars.contains {
                $0 == " " || $0 == "=" || $0 == "\"" || $0 == "\\" || $0.value < 0x20 || $0.value == 0x7F
            }
        guard needsQuotes else { return value }
        var escaped = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                escaped += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped + "\""
    }
}
