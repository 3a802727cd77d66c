import CFuzzerEntry
import ReachFuzzing

/// libFuzzer's entry point for `fuzz-http-response-reader`: hands each input to
/// `FuzzInput.httpResponseReader`. Built with `-parse-as-library -sanitize=fuzzer,address` by
/// scripts/fuzz; in an ordinary build this file is an empty program.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    FuzzInput.httpResponseReader(Array(UnsafeRawBufferPointer(start: start, count: count)))
    return 0
}
