import ArgumentParser
import Dispatch
import Glibc
import ReachDaemon

/// glibc's `mallopt(3)` and its `M_MMAP_THRESHOLD` (-3), declared in `<malloc.h>`, which the
/// Glibc module does not import.
@_silgen_name("mallopt")
private func mallopt(_ parameter: Int32, _ value: Int32) -> Int32
private let mmapThreshold: Int32 = -3

/// Runs ``ReachdCommand`` on the event loops (``EventLoopExecutor``) while the main thread waits for it.
///
/// An `async` entry point would hand the main thread to `dispatch_main`, which ends it with
/// `pthread_exit`. That unwinds the thread's stack, and the unwinder searches the executable's
/// unwind tables (megabytes of file pages that then stay resident) for a thread with nothing to
/// clean up. Nothing in reachd runs on the main actor, so the main thread only has to wait.
@main
enum ReachdMain {
    static func main() {
        // Every event holds every target's status: with 1,000 targets, an array of about 270 KB.
        // glibc raises its mmap threshold to the largest block freed, after which such arrays come
        // from the heap, and the heap keeps its high-water mark. A fixed threshold keeps them in
        // mappings of their own, returned to the kernel when freed: at 1,000 targets, 15.7 MiB of
        // private memory instead of 18.8–26.7, for no more CPU (measured A/B).
        _ = mallopt(mmapThreshold, 128 << 10)
        EventLoopExecutorFactory.install()
        // SIGABRT from systemd's watchdog (WatchdogSignal=) must end a wedged reachd, with a core
        // dump. The Swift runtime's backtracer, when it finds swift-backtrace (a toolchain beside
        // the binary), catches SIGABRT like a crash, prints a backtrace and then lets a signal sent
        // by another process go: reachd ran on, watchdog pings and all, until systemd's SIGKILL
        // 90 s later. Swift's own crashes (SIGILL, SIGSEGV, SIGTRAP) keep their backtraces. It is
        // unblocked too, before any thread inherits the mask: a launcher's blocked SIGABRT (a test
        // runner's) would leave it pending for good.
        signal(SIGABRT, SIG_DFL)
        var abort = sigset_t()
        sigemptyset(&abort)
        sigaddset(&abort, SIGABRT)
        pthread_sigmask(SIG_UNBLOCK, &abort, nil)
        let finished = DispatchSemaphore(value: 0)
        Task.detached {
            await ReachdCommand.main()
            finished.signal()
        }
        finished.wait()
    }
}
