import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Reads `/proc` to tell whether a process group still has a live member, so that a hook whose
/// whole group exited at `SIGTERM` does not wait out the grace period before `SIGKILL`.
///
/// `kill(-pgid, 0)` cannot tell: the hook itself stays a zombie in its group until it is reaped,
/// which happens only once its run is over.
enum ProcessGroup {
    static func hasLiveMember(_ pgid: Int32) -> Bool {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return true }
        for entry in entries where entry.first?.isNumber == true {
            guard let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            // After "pid (comm) ": state, ppid, pgrp, ...
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 2, Int32(fields[2]) == pgid else { continue }
            if fields[0] != "Z" { return true }
        }
        return false
    }
}
