import Foundation
import Logging
import ReachConfig
import ReachCore
import ReachHistory
import ReachSupport

// What history's own work costs, apart from everything else reachd does, so that the machine's
// load cannot hide it: the recorder's work for TARGETS targets probed once a second, SECONDS
// seconds of it run back to back on a wall clock the benchmark moves (a result per target, then
// the commit, every second; the minute's rollup rows and the maintenance every 60). The file is
// real (SQLite in WAL mode, in DIRECTORY). Prints the process's CPU time (every thread, GRDB's
// included) per simulated second, to set beside reachd's CPU per second without history.
//
//   history-recording-benchmark DIRECTORY [TARGETS=1000] [SECONDS=300] [REPEATS=3]
let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write(
        Data("usage: history-recording-benchmark DIRECTORY [TARGETS] [SECONDS] [REPEATS]\n".utf8)
    )
    exit(64)
}
let targets = arguments.count > 2 ? Int(arguments[2]) ?? 1000 : 1000
let seconds = arguments.count > 3 ? Int(arguments[3]) ?? 300 : 300
let repeats = arguments.count > 4 ? Int(arguments[4]) ?? 3 : 3
let names = (0..<targets).map { "target-\($0)" }

/// User and system CPU time of the whole process.
func processCPU() -> Duration {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let seconds = Int64(usage.ru_utime.tv_sec) + Int64(usage.ru_stime.tv_sec)
    let micros = seconds * 1_000_000 + Int64(usage.ru_utime.tv_usec) + Int64(usage.ru_stime.tv_usec)
    return .microseconds(micros)
}

final class MovedClock: @unchecked Sendable {
    private let lock = NSLock()
    private var now = WallTime(sinceEpoch: .seconds(1_800_000_000))
    func read() -> WallTime { lock.withLock { now } }
    func advance() { lock.withLock { now = now.advanced(by: .seconds(1)) } }
}

var perSecond: [Double] = []
for repeat_ in 1...repeats {
    let path = "\(arguments[1])/history-\(repeat_).sqlite"
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    let clock = MovedClock()
    let store = try HistoryStore.open(path: path, createDirectory: true).store
    let recorder = try await HistoryRecorder(
        store: store,
        settings: HistorySettings(),
        clock: { clock.read() },
        logger: Logger(label: "bench")
    )
    recorder.record(Verdict(state: .connected, reason: .healthy, since: clock.read()))
    let cpuBefore = processCPU()
    let wallBefore = ContinuousClock.now
    for second in 1...seconds {
        for (index, name) in names.enumerated() {
            recorder.record(ProbeResult.success(name, latency: .microseconds(900 + (index * 7 + second * 13) % 400)))
        }
        clock.advance()
        try await recorder.flush()
        // As the daemon: the first maintenance 5 s in, then every 60 s.
        if second % 60 == 5 { _ = try await recorder.maintain() }
    }
    let cpu = processCPU() - cpuBefore
    let wall = ContinuousClock.now - wallBefore
    let milliseconds = Double(cpu.components.seconds) * 1000 + Double(cpu.components.attoseconds) / 1e15
    perSecond.append(milliseconds / Double(seconds))
    print(
        "repeat \(repeat_)/\(repeats): \(targets) targets, \(seconds) simulated s: CPU \(cpu), wall \(wall), "
            + String(format: "%.3f CPU-ms per simulated second", milliseconds / Double(seconds))
    )
    store.close()
}
let sorted = perSecond.sorted()
print(
    String(
        format: "RESULT history-recording N=%d: median %.3f CPU-ms per second of recording, max %.3f",
        targets,
        sorted[sorted.count / 2],
        sorted.last ?? 0
    )
)
