import ReachCore
import Testing

/// What SwiftNIO, grpc-swift and BoringSSL put in their own descriptions of an error
/// (`connect(descriptor:…): Connection refused) (errno: 111)`, `UnableToParseFrame(file: …)`,
/// `error:1000007d:SSL routines:…`), which a probe's detail never carries: people read it.
private let libraryFragments = ["errno", ") (", "NIO", "Error", "error:", ".swift", "descriptor", " <- "]

/// Records an issue when `failure`'s detail carries a library's text instead of our words.
func expectOurWords(_ failure: ProbeFailure?, sourceLocation: SourceLocation = #_sourceLocation) {
    guard let detail = failure?.detail else { return }
    let found = libraryFragments.filter { detail.contains($0) }
    #expect(
        found.isEmpty,
        "the detail \"\(detail)\" carries a library's text: \(found)",
        sourceLocation: sourceLocation
    )
}
