import Foundation

// What both ReachKit benchmarks share: the item they queue, and how they time and print.
#if canImport(Glibc)
import Glibc
#endif

/// The item the benchmarks enqueue: a small reading, as a program would queue for upload.
package struct Payload: Codable, Sendable {
    package var number: Int
    package var text: String

    package init(number: Int, text: String) {
        self.number = number
        self.text = text
    }
}

/// Writes a line at once (print's buffer would hold it when stdout is a pipe).
package func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Monotonic seconds, for timing one call.
package func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Median and 99th percentile of `samples` (seconds), in milliseconds.
package func summary(_ samples: [Double]) -> String {
    let sorted = samples.sorted()
    guard !sorted.isEmpty else { return "no samples" }
    let median = sorted[sorted.count / 2] * 1000
    let p99 = sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))] * 1000
    return String(format: "median %.2f ms, p99 %.2f ms", median, p99)
}
