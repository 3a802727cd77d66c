import ReachCore

extension ConnectivityService {
    /// The verdict's quality: the current one first, then each change of its state, place, target
    /// or measures past their budget (not each new measured value), until ``verdicts()`` ends. A
    /// program that backs off while the line is slow follows this instead of every verdict.
    public func qualityChanges() -> AsyncStream<VerdictQuality?> {
        let verdicts = verdicts()
        return AsyncStream { continuation in
            let task = Task {
                var last: VerdictQuality?? = .none
                for await verdict in verdicts {
                    let quality = verdict.quality
                    if case .some(let previous) = last,
                        !(quality.map { $0.differsInMeaning(from: previous) } ?? (previous != nil))
                    {
                        continue
                    }
                    last = .some(quality)
                    continuation.yield(quality)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
