import Dispatch

/// Runs ``ReachdCommand`` on the cooperative pool while the main thread waits for it.
///
/// An `async` entry point would hand the main thread to `dispatch_main`, which ends it with
/// `pthread_exit`. That unwinds the thread's stack, and the unwinder searches the executable's
/// unwind tables (megabytes of file pages that then stay resident) for a thread with nothing to
/// clean up. Nothing in reachd runs on the main actor, so the main thread only has to wait.
@main
enum ReachdMain {
    static func main() {
        let finished = DispatchSemaphore(value: 0)
        Task.detached {
            await ReachdCommand.main()
            finished.signal()
        }
        finished.wait()
    }
}
