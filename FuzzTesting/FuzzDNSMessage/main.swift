import CFuzzerEntry
import ReachFuzzing

/// libFuzzer's entry point for `fuzz-dns-message`: hands each input to `FuzzInput.dnsMessage`.
/// Built with `-parse-as-library -sanitize=fuzzer,address` by scripts/fuzz; in an ordinary build
/// this file is an empty program.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    FuzzInput.dnsMessage(Array(UnsafeRawBufferPointer(start: start, count: count)))
    return 0
}
