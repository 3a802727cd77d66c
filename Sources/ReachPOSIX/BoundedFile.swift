import ReachSupport

#if canImport(Glibc)
import Glibc
#endif

/// Reads the small text files a configuration names (the configuration itself, a targets list,
/// tokens and secrets) with a cap on their size.
///
/// These files are read whole, at start and on every reload. Without a cap a mistaken path
/// (a log file, a disk image, `/dev/zero`) would make reachd read until memory runs out instead of
/// saying what is wrong; with one it reads at most one byte past the cap and reports the file.
package enum BoundedFile {
    /// The cap on a configuration file and on a `--targets-file` list: far beyond any real one.
    package static let textLimit = 1 << 20
    /// The cap on a token or secret file: a token is one line.
    package static let secretLimit = 64 << 10

    /// Why a file could not be used; the description completes "cannot read PATH: …".
    package enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case unreadable(String)
        case tooLarge(limit: Int)
        /// A secret file that holds nothing but whitespace.
        case empty
        /// A token file with more than one line, or a control character: it could not be sent as a header.
        case notOneLine(controlCharacter: Bool)

        package var description: String {
            switch self {
            case .unreadable(let reason): reason
            case .tooLarge(let limit):
                "it is larger than \(BoundedFile.size(limit)), the most reachd reads from such a file"
            case .empty: "it is empty"
            case .notOneLine(let controlCharacter):
                controlCharacter ? "it holds a control character" : "it holds more than one line"
            }
        }
    }

    /// The secret in a token or secret file: its text without surrounding whitespace, at most
    /// ``secretLimit`` bytes, not empty. A bearer token (`oneLine`) must also be one line without
    /// control characters, as an HTTP header value must. The one reader of secrets: the
    /// configuration's token and webhook secrets, reachctl's and ReachKit's `--token-file`.
    package static func readSecret(_ path: String, oneLine: Bool = true) -> Result<String, Failure> {
        readText(path, limit: secretLimit).flatMap { text in
            let secret = text.trimmingWhitespace
            if secret.isEmpty { return .failure(.empty) }
            if oneLine, secret.hasHeaderControlCharacter {
                return .failure(.notOneLine(controlCharacter: !secret.contains("\n")))
            }
            return .success(secret)
        }
    }

    /// The file's UTF-8 text, if it is readable text of at most `limit` bytes.
    package static func readText(_ path: String, limit: Int) -> Result<String, Failure> {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return .failure(.unreadable(SystemCallError.reason(errno))) }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: limit + 1)
        var count = 0
        while count <= limit {
            let read = bytes.withUnsafeMutableBytes {
                Glibc.read(descriptor, $0.baseAddress! + count, limit + 1 - count)
            }
            if read < 0, errno == EINTR { continue }
            guard read >= 0 else { return .failure(.unreadable(SystemCallError.reason(errno))) }
            if read == 0 { break }
            count += read
        }
        guard count <= limit else { return .failure(.tooLarge(limit: limit)) }
        guard let text = String(validating: bytes[..<count], as: UTF8.self) else {
            return .failure(.unreadable("it is not UTF-8 text"))
        }
        return .success(text)
    }

    static func size(_ bytes: Int) -> String {
        bytes >= 1 << 20 && bytes % (1 << 20) == 0
            ? "\(bytes >> 20) MiB" : bytes % 1024 == 0 ? "\(bytes >> 10) KiB" : "\(bytes) bytes"
    }
}
