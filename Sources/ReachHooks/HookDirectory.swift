import FoundationEssentials
import ReachPOSIX

#if canImport(Glibc)
import Glibc
#endif

/// One directory of hooks, read afresh for every transition so that adding, fixing or removing a
/// hook needs no restart.
///
/// It applies NetworkManager's dispatcher rules, because whatever reachd runs, it runs with
/// reachd's privileges: a hook must be a regular file (a symlink to one is followed), executable,
/// owned by root (or by reachd's own user), not writable by its group or others, and neither
/// setuid nor setgid. Anything else is refused, with the reason, and not run. Hidden files and
/// package-manager leftovers (`~`, `.dpkg-old`, `.rpmnew`, ...) are ignored. A directory that
/// others than root (or reachd's user) can write runs nothing: anyone who can write it could link
/// a root-owned program into it.
struct HookDirectory: Sendable {
    let path: String

    /// A file in the directory, in lexical (byte) order.
    enum Entry: Sendable, Equatable {
        case hook(name: String, path: String)
        case refused(name: String, path: String, reason: String)
    }

    /// What reading the directory found; `.missing` is normal (no hooks configured).
    enum Listing: Sendable, Equatable {
        case entries([Entry])
        case missing
        case unusable(String)
    }

    static let ignoredSuffixes = [
        "~", ".dpkg-old", ".dpkg-new", ".dpkg-dist", ".dpkg-tmp", ".rpmsave", ".rpmnew", ".rpmorig", ".swp",
    ]

    func read() -> Listing {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: path)
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            return .missing
        } catch {
            var isDirectory = false
            if !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) { return .missing }
            let why = (error as? CocoaError)?.code == .fileReadNoPermission ? "permission denied" : "\(error)"
            return .unusable(isDirectory ? "cannot list it: \(why)" : "it is not a directory")
        }
        // Whoever can write the directory can point a symlink at any root-owned program.
        var info = stat()
        if stat(path, &info) == 0,
            (info.st_uid != 0 && info.st_uid != geteuid()) || info.st_mode & (S_IWGRP | S_IWOTH) != 0
        {
            return .unusable(
                "it is writable by others than root (owner uid \(info.st_uid), mode \(String(info.st_mode & 0o7777, radix: 8))), so no hook in it runs"
            )
        }
        let hooks =
            names
            .filter { name in !name.hasPrefix(".") && !Self.ignoredSuffixes.contains { name.hasSuffix($0) } }
            .sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        return .entries(hooks.map { check(name: $0) })
    }

    /// Applies the dispatcher's rules to one file.
    func check(name: String) -> Entry {
        let file = path.hasSuffix("/") ? path + name : path + "/" + name
        var info = stat()
        guard stat(file, &info) == 0 else {
            return .refused(name: name, path: file, reason: "cannot stat it: \(SystemCallError.reason(errno))")
        }
        let mode = info.st_mode
        let permissions = String(mode & 0o7777, radix: 8)
        let reason: String? =
            if mode & S_IFMT != S_IFREG {
                "it is not a regular file"
            } else if info.st_uid != 0 && info.st_uid != geteuid() {
                "it is owned by uid \(info.st_uid), not by root\(geteuid() == 0 ? "" : " or reachd's uid \(geteuid())")"
            } else if mode & S_IWOTH != 0 {
                "it is writable by others (mode \(permissions))"
            } else if mode & S_IWGRP != 0 {
                "it is writable by its group (mode \(permissions))"
            } else if mode & (S_ISUID | S_ISGID) != 0 {
                "it is setuid or setgid (mode \(permissions))"
            } else if mode & 0o111 == 0 || access(file, X_OK) != 0 {
                "it is not executable (mode \(permissions))"
            } else {
                nil
            }
        guard let reason else { return .hook(name: name, path: file) }
        return .refused(name: name, path: file, reason: reason)
    }
}
