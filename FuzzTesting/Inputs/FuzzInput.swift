/// The fuzz targets' inputs: one function per target (in the `FuzzInput+*.swift` files), taking
/// the bytes libFuzzer made up and feeding them to reachd's own parser of that kind of outside
/// input. Each checks what must hold of any answer (it decodes again to the same thing, it is
/// deterministic, it is bounded) and traps when it does not, so that a real bug is a crash
/// libFuzzer reports.
///
/// The fuzz executables (`FuzzTesting/Fuzz*/main.swift`) call these, and so does
/// `ReachFuzzingTests`, which replays every committed corpus and crash input in `swift test`.
package enum FuzzInput {
    /// Every fuzz target: its name (the folder of its corpus, crashes and dictionary) and its function.
    package static let targets: [(name: String, run: @Sendable ([UInt8]) -> Void)] = [
        ("netlink", netlink),
        ("config", config),
        ("http-response", httpResponse),
        ("grpc-health", grpcHealth),
        ("event-stream", eventStream),
        ("captive-portal", captivePortal),
        ("history-query", historyQuery),
        ("documents", documents),
        ("status-api", statusAPI),
        ("dns-message", dnsMessage),
        ("http-response-reader", httpResponseReader),
    ]

    /// Traps with `message` unless `condition` holds: a broken invariant is a finding.
    static func require(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { preconditionFailure("fuzz invariant broken: \(message())") }
    }

    /// `bytes` cut at each `separator`: the fields a target reads from one input.
    static func fields(_ bytes: [UInt8], separator: UInt8 = 0) -> [[UInt8]] {
        bytes.split(separator: separator, omittingEmptySubsequences: false).map(Array.init)
    }

    /// `bytes` as text, the way a `String(decoding:)` reader of the wire sees them.
    static func text(_ bytes: some Collection<UInt8>) -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}
