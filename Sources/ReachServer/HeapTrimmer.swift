import Synchronization

#if canImport(Glibc)
/// glibc's `malloc_trim(3)`, declared in `<malloc.h>`, which the Glibc module does not import.
@_silgen_name("malloc_trim")
private func malloc_trim(_ pad: Int) -> Int32
#endif

/// Gives the heap that departed event-stream clients used back to the kernel.
///
/// glibc keeps what a crowd of clients made it allocate (their frames, buffers and channels) in
/// its arenas for reuse, so a daemon that once served 1,000 SSE clients would keep their tens of
/// MiB for good, and every new high of concurrent clients would raise its resident size a little
/// more. `malloc_trim` returns the free pages of every arena. It runs once, ``delay`` after the
/// last of a crowd has left (a crowd that leaves over several seconds costs one call, made when it
/// has gone), and never while no client comes or goes: an idle daemon does not wake for it. Each
/// trim is counted (`reachd_heap_trims_total`), so that a resident size can be read once the heap
/// is given back rather than at a moment that may fall before or after it.
final class HeapTrimmer: Sendable {
    /// How long no client must have left before the trim.
    let delay: Duration
    private let trimmed: @Sendable () -> Void
    /// The latest departure while a trim is due; `nil` when none is.
    private let lastDeparture = Mutex<ContinuousClock.Instant?>(nil)

    /// - Parameter trimmed: Called after each trim.
    init(delay: Duration = .seconds(2), trimmed: @escaping @Sendable () -> Void = {}) {
        self.delay = delay
        self.trimmed = trimmed
    }

    /// A client left: trim once ``delay`` has passed without another departure.
    func clientLeft() {
        let due = lastDeparture.withLock { last in
            defer { last = .now }
            return last == nil
        }
        guard due else { return }
        Task.detached { [self] in
            var wait = delay
            while true {
                try? await Task.sleep(for: wait)
                let quiet: Duration? = lastDeparture.withLock { last in
                    let quiet = ContinuousClock.now - (last ?? .now)
                    guard quiet < delay else {
                        last = nil
                        return nil
                    }
                    return quiet
                }
                guard let quiet else { break }
                wait = delay - quiet
            }
            #if canImport(Glibc)
            _ = malloc_trim(0)
            #endif
            trimmed()
        }
    }
}
