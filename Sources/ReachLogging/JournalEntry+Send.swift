import CSystemd
import Glibc

extension JournalEntry {
    /// Sends the entry with one `iovec` per `NAME=value` (binary-safe: values may hold newlines).
    ///
    /// May block while journald's socket queue is full (a stopped journald): call it only from
    /// the writer thread. Returns 0, or a negative errno when journald does not take it.
    func send() -> Int32 {
        var bytes: [UInt8] = []
        var ranges: [Range<Int>] = []
        for field in fields {
            let start = bytes.count
            bytes.append(contentsOf: field.name.utf8)
            bytes.append(UInt8(ascii: "="))
            bytes.append(contentsOf: field.value.utf8)
            ranges.append(start..<bytes.count)
        }
        return bytes.withUnsafeMutableBytes { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -EINVAL }
            let vectors = ranges.map { iovec(iov_base: base + $0.lowerBound, iov_len: $0.count) }
            // libsystemd takes the location as ready-made fields, as its own sd_journal_sendv macro passes them.
            return "CODE_FILE=\(file)".withCString { file in
                "CODE_LINE=\(line)".withCString { line in
                    function.withCString { function in
                        vectors.withUnsafeBufferPointer {
                            sd_journal_sendv_with_location(file, line, function, $0.baseAddress, Int32($0.count))
                        }
                    }
                }
            }
        }
    }
}
