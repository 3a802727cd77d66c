import Foundation

/// Reads the small text files a configuration names (the configuration itself, a targets list,
/// tokens and secrets) with a cap on their size.
///
/// These files are read whole, at start and on every reload. Without a cap a mistaken path
/// (a log file, a disk image, `/dev/zero`) would make reachd read until memory runs out instead of
/// saying what is wrong; with one it reads at most one byte past the cap and reports the file.
public enum BoundedFile {
    /// The cap on a configuration file and on a `--targets-file` list: far beyond any real one.
    public static let textLimit = 1 << 20
    /// The cap on a token or secret file: a token is one line.
    public static let secretLimit = 64 << 10

    /// Why a file could not be used; the description completes "cannot read PATH: …".
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case unreadable(String)
        case tooLarge(limit: Int)

        public var description: String {
            switch self {
            case .unreadable(let reason): reason
            case .tooLarge(let limit): "it is larger than \(BoundedFile.size(limit)), the most reachd reads from such a file"
            }
        }
    }

    /// The file's UTF-8 text, if it is readable text of at most `limit` bytes.
    public static func readText(_ path: String, limit: Int) -> Result<String, Failure> {
        guard let handle = FileHandle(forReadingAtPath: path) else { return .failure(.unreadable(unreadableReason(path))) }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: limit + 1) ?? Data()
        } catch {
            return .failure(.unreadable(unreadableReason(path)))
        }
        guard data.count <= limit else { return .failure(.tooLarge(limit: limit)) }
        guard let text = String(data: data, encoding: .utf8) else { return .failure(.unreadable("it is not UTF-8 text")) }
        return .success(text)
    }

    static func size(_ bytes: Int) -> String {
        bytes >= 1 << 20 && bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB" : bytes % 1024 == 0 ? "\(bytes >> 10) KiB" : "\(bytes) bytes"
    }

    /// Why a file that could not be read was unreadable.
    static func unreadableReason(_ path: String) -> String {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return "no such file" }
        if isDirectory.boolValue { return "it is a directory" }
        guard FileManager.default.isReadableFile(atPath: path) else { return "permission denied" }
        return "it is not UTF-8 text"
    }
}
