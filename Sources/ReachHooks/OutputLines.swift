import Synchronization

/// Cuts a hook's output into lines for the log, holding at most one line's worth of bytes.
///
/// A line longer than ``maximumLength`` bytes is logged cut, with the number of bytes left out; a
/// carriage return before the newline is dropped; bytes that are not UTF-8 become U+FFFD.
struct OutputLines {
    /// 4 KiB: a journal field and a terminal line both stay readable.
    static let maximumLength = 4096

    private var pending: [UInt8] = []
    /// Bytes of the current line dropped past the maximum.
    private var cut = 0

    /// Takes the next bytes and calls `emit` for every line they complete.
    mutating func feed(_ bytes: UnsafeRawBufferPointer, emit: (String) -> Void) {
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                emit(takeLine())
            } else if pending.count < Self.maximumLength {
                pending.append(byte)
            } else {
                cut += 1
            }
        }
    }

    /// The last line, when the output did not end with a newline.
    mutating func finish(emit: (String) -> Void) {
        if !pending.isEmpty || cut > 0 { emit(takeLine()) }
    }

    private mutating func takeLine() -> String {
        if pending.last == UInt8(ascii: "\r") { pending.removeLast() }
        var line = String(decoding: pending, as: UTF8.self)
        if cut > 0 { line += " […\(cut) more bytes not logged]" }
        pending.removeAll(keepingCapacity: true)
        cut = 0
        return line
    }
}

/// How many output lines one hook run may log, across standard output and error, so that a hook
/// printing in a loop cannot flood the journal; the rest are read (the hook never blocks on a full
/// pipe), counted and summed up in one line.
final class OutputBudget: Sendable {
    static let defaultLines = 200

    private let remaining: Mutex<Int>
    private let dropped = Mutex(0)

    init(lines: Int = OutputBudget.defaultLines) {
        remaining = Mutex(lines)
    }

    /// Whether one more line may be logged; counts it as dropped when not.
    func take() -> Bool {
        let allowed = remaining.withLock { remaining in
            guard remaining > 0 else { return false }
            remaining -= 1
            return true
        }
        if !allowed { dropped.withLock { $0 += 1 } }
        return allowed
    }

    var droppedLines: Int { dropped.withLock { $0 } }
}
