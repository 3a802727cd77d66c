// An idle program that follows reachd with ReachKit alone (no embedded monitor, probers or
// server), then prints its own memory: what the reachd-backed service costs a program.
//
//   reachkit-idle-client ENDPOINT [SECONDS]
import Foundation
import Logging
import ReachKit

let arguments = Array(CommandLine.arguments.dropFirst())
guard let endpoint = arguments.first else {
    FileHandle.standardError.write(Data("usage: reachkit-idle-client ENDPOINT [SECONDS]\n".utf8))
    exit(2)
}
let seconds = arguments.count > 1 ? Int(arguments[1]) ?? 10 : 10
let logger = Logger(label: "reachkit-idle-client") { _ in SwiftLogNoOpLogHandler() }
let service = ReachdService(endpoint: ReachdEndpoint(base: endpoint), logger: logger)
let running = Task { try await service.run() }
try await Task.sleep(for: .seconds(seconds))
let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
let rollup = (try? String(contentsOfFile: "/proc/self/smaps_rollup", encoding: .utf8)) ?? ""
/// A `Field:   N kB` line's N.
func kib(_ text: String, _ field: String) -> Int {
    text.split(separator: "\n").first { $0.hasPrefix(field + ":") }.flatMap {
        Int($0.split(separator: " ").dropFirst().first ?? "")
    } ?? -1
}
let clean = kib(rollup, "Private_Clean")
let dirty = kib(rollup, "Private_Dirty")
print(
    "RESULT idle reachd-backed client after \(seconds) s (verdict \(service.current.state.rawValue)): private \(clean + dirty) KiB"
        + " (dirty \(dirty) KiB, clean \(clean) KiB), RSS \(kib(status, "VmRSS")) KiB, anon \(kib(status, "RssAnon")) KiB (goal: private < 10 MiB)"
)
running.cancel()
