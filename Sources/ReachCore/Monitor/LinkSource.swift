/// Where link facts come from: rtnetlink in production, an in-memory source in tests.
///
/// A link source plugs into the monitor with one call in the composition root:
/// `try await source.run(report: monitor.update(links:))`.
package protocol LinkSource: Sendable {
    /// Watches the interfaces until the calling task is cancelled.
    ///
    /// Calls `report` with a complete snapshot as soon as the initial state is known (before any
    /// verdict depends on it), then with a fresh complete snapshot after every change. `report` may be
    /// called from any thread, but never concurrently with itself.
    func run(report: @escaping @Sendable (LinkSnapshot) -> Void) async throws

    /// How many times the source lost news of a change and had to read everything again (rtnetlink's
    /// `ENOBUFS`), for a metric; readable from any thread. Zero for a source that cannot lose news.
    var overrunCount: Int { get }
}

extension LinkSource {
    package var overrunCount: Int { 0 }
}
