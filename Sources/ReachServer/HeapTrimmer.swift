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
/// more. `malloc_trim` returns the free pages of every arena. It runs once, a moment after a client
/// leaves (so a crowd leaving costs one call, made when it has gone), and never while no client
/// comes or goes: an idle daemon does not wake for it.
final class HeapTrimmer: Sendable {
    /// How long after a departure the trim waits for the rest of a crowd to leave.
    let delay: Duration
    private let scheduled = Atomic(false)

    init(delay: Duration = .seconds(2)) {
        self.delay = delay
    }

    /// A client left: trim after ``delay`` unless a trim is already due.
    func clientLeft() {
        guard scheduled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        let delay = self.delay
        Task.detached { [self] in
            try? await Task.sleep(for: delay)
            scheduled.store(false, ordering: .releasing)
            #if canImport(Glibc)
            _ = malloc_trim(0)
            #endif
        }
    }
}
