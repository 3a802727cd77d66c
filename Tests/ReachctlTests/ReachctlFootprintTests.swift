import Foundation
import ReachTestRigs
import ReachTesting
import Testing

/// reachctl is a client: it talks to reachd through ReachClient alone and must not carry the
/// server stack, an HTTP client library, TLS or gRPC in its binary, nor full Foundation with ICU's
/// tables (FoundationEssentials is enough): each one costs size, start-up time and private memory
/// on every machine that runs it.
@Suite("reachctl's binary")
struct ReachctlFootprintTests {
    /// Mangled-name fragments of the modules a client has no use for: `<length><Module>`, as Swift
    /// mangles a module's symbols, and BoringSSL's C prefix.
    static let forbidden = [
        "11Hummingbird", "15HummingbirdCore", "10Prometheus", "15AsyncHTTPClient", "6NIOSSL", "13CNIOBoringSSL",
        "CNIOBoringSSL_",
        "8GRPCCore", "21GRPCNIOTransportHTTP2", "12GRPCProtobuf", "13SwiftProtobuf", "8NIOHTTP2", "10Foundation",
        "icu_",
    ]

    @Test func linksNoneOfTheServerStackNoHTTPClientLibraryNoTLSNoGRPCAndNoICU() async throws {
        try await offPool {
            let binary = URL(filePath: BuiltProducts.reachctl)
            let symbols = try await runProgram("/usr/bin/nm", ["--defined-only", binary.path])
            #expect(symbols.status == 0, "\(symbols.errors)")
            let lines = symbols.output.split(separator: "\n")
            #expect(lines.count > 1000, "nm listed reachctl's symbols")
            for fragment in Self.forbidden {
                let found = lines.filter { $0.contains(fragment) }
                #expect(found.isEmpty, "reachctl carries \(fragment): \(found.prefix(3))")
            }
            #expect(lines.contains { $0.contains("11ReachClient") }, "the check would see a module that is there")
        }
    }
}
