import Foundation
import Synchronization

/// Runs `body` as part of the calling task, but on a thread of its own instead of Swift's
/// cooperative pool: for blocking calls, and for CPU-bound test bodies (property checks, fuzz
/// loops, corpus scans).
///
/// The pool has one thread per core. On a 2-core machine, two tests busy on it for a second hold
/// up every other test in the process, and a test that waits on the code under test in real time
/// (a scheduler on a test clock, a reader that must wake within a bound) then measures the
/// neighbours' CPU, not its own code. A thread of its own is scheduled by the kernel beside the
/// pool, so it shares the cores without taking the pool's turns. The body stays in the calling
/// task, so task-locals (Swift Testing's current test, for `#expect`) are as usual; child tasks
/// run on the same thread, unstructured tasks on the pool.
package func offPool<T: Sendable>(_ body: @Sendable () async throws -> T) async rethrows -> T {
    let executor = OwnThreadExecutor()
    defer { executor.finish() }
    return try await withTaskExecutorPreference(executor, operation: body)
}

/// A task executor that runs every job on one thread it starts, until ``finish()``.
private final class OwnThreadExecutor: TaskExecutor {
    private struct Queue {
        var jobs: [UnownedJob] = []
        var finished = false
    }

    private let queue = Mutex(Queue())
    /// Signalled once per job enqueued, and once by ``finish()``.
    private let pending = DispatchSemaphore(value: 0)

    init() {
        let thread = Thread { [self] in self.run() }
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let accepted = queue.withLock { queue in
            guard !queue.finished else { return false }
            queue.jobs.append(job)
            return true
        }
        // A job that arrives after the body returned (none should) runs on the pool rather than never.
        guard accepted else { return globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
        pending.signal()
    }

    /// Lets the thread end once the jobs already queued have run.
    func finish() {
        queue.withLock { $0.finished = true }
        pending.signal()
    }

    private func run() {
        while true {
            pending.wait()
            let (job, finished) = queue.withLock { queue in
                (queue.jobs.isEmpty ? nil : queue.jobs.removeFirst(), queue.finished)
            }
            if let job {
                job.runSynchronously(on: asUnownedTaskExecutor())
            } else if finished {
                return
            }
        }
    }
}
