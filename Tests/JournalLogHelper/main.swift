import Foundation
import Logging
import ReachConfig
import ReachDaemon

// Logs what it reads, through reachd's own log output, so tests can stop journald around it.
//   journal-log-helper IDENTIFIER [TARGET]
// Each input line is `LEVEL<TAB>MESSAGE[<TAB>KEY=VALUE]...` (`\n` in MESSAGE is a newline); after
// each line it prints `logged N` on standard output. At the end of input it hands the journal the
// lines still waiting, as reachd does when it exits, and exits 0.
let arguments = CommandLine.arguments
let identifier = arguments.count > 1 ? arguments[1] : "journal-log-helper"
let target = arguments.count > 2 ? LogSettings.Target(rawValue: arguments[2]) ?? .journald : .journald
let output = LogOutput(
    settings: LogSettings(target: target, level: .trace),
    environment: ProcessInfo.processInfo.environment,
    identifier: identifier
)
FileHandle.standardOutput.write(Data("target \(output.target.rawValue)\n".utf8))
let logger = output.logger(label: identifier)
var count = 0
while let line = readLine() {
    let parts = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
    guard parts.count >= 2, let level = Logger.Level(rawValue: parts[0]) else { continue }
    var metadata: Logger.Metadata = [:]
    for field in parts.dropFirst(2) {
        guard let equals = field.firstIndex(of: "=") else { continue }
        metadata[String(field[..<equals])] = .string(String(field[field.index(after: equals)...]))
    }
    logger.log(level: level, "\(parts[1].replacingOccurrences(of: "\\n", with: "\n"))", metadata: metadata)
    count += 1
    FileHandle.standardOutput.write(Data("logged \(count)\n".utf8))
}
output.finish()
