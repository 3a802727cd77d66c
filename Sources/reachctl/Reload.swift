import ArgumentParser
import FoundationEssentials
import Glibc
import ReachCore
import ReachPOSIX
import ReachSupport

extension ReachctlCommand {
    /// `reachctl reload`: SIGHUP to reachd, for people who do not remember the signal.
    struct Reload: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make reachd read its configuration again (sends it SIGHUP).",
            discussion: """
                Under systemd, `systemctl reload reachd` does the same. reachd applies a valid \
                configuration without dropping subscribers, and keeps the running one when the new \
                one is invalid; its log (journalctl -u reachd) says which. Without --pid, reachctl \
                looks for the one process named reachd.

                Exit status: 0 sent, 2 no reachd found (or more than one, or not permitted).
                """
        )

        @Option(help: ArgumentHelp("Signal this reachd process.", valueName: "pid"))
        var pid: Int32?

        func run() throws {
            let target: Int32
            if let pid {
                guard Self.isReachd(pid) else {
                    Output.error("reachctl: process \(pid) is not reachd")
                    throw ExitCode(ExitStatus.unreachable)
                }
                target = pid
            } else {
                let found = Self.reachdProcesses()
                guard found.count == 1, let only = found.first else {
                    Output.error(
                        found.isEmpty
                            ? "reachctl: no reachd process is running"
                            : "reachctl: \(found.count) reachd processes are running (\(found.map(String.init).joined(separator: ", "))): pick one with --pid"
                    )
                    throw ExitCode(ExitStatus.unreachable)
                }
                target = only
            }
            guard kill(target, SIGHUP) == 0 else {
                let reason =
                    errno == EPERM
                    ? "not permitted: run as root or as reachd's user, or use systemctl reload reachd"
                    : SystemCallError.reason(errno)
                Output.error("reachctl: cannot signal reachd (pid \(target)): \(reason)")
                throw ExitCode(ExitStatus.unreachable)
            }
            Output.line(
                "reload requested (SIGHUP to reachd, pid \(target)); its log says whether the configuration was applied"
            )
        }

        /// Processes whose command name is `reachd`, from /proc.
        static func reachdProcesses() -> [Int32] {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            return entries.compactMap(Int32.init).filter(isReachd).sorted()
        }

        static func isReachd(_ pid: Int32) -> Bool {
            guard case .success(let name) = BoundedFile.readText("/proc/\(pid)/comm", limit: 64) else { return false }
            return name.trimmingWhitespace == "reachd"
        }
    }
}
