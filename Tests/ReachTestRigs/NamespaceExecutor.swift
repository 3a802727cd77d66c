import CNetlink
import Foundation
import Synchronization

/// A task executor with one thread of its own that has moved into a network namespace, so that code
/// which opens its sockets where it runs (a ping socket, a netlink dump) can be tested in a namespace
/// the test made, through its public async API, in the test's own process. A thread starts in the
/// namespace of the thread that creates it, so the threads the code starts are the namespace's too.
/// The process's other threads stay where they were.
final class NamespaceExecutor: TaskExecutor {
    private let jobs = Mutex<(queue: [UnownedJob], stopping: Bool)>(([], false))
    private let wakeUp = DispatchSemaphore(value: 0)

    /// Runs `body` on a fresh executor whose thread entered the namespace at `path`
    /// (`/run/netns/NAME`), then stops the thread.
    static func run<T: Sendable>(in path: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let executor = NamespaceExecutor()
        try await executor.start(entering: path)
        defer { executor.stop() }
        // A task of its own, so that the caller goes on where it was, not on the namespace's thread.
        return try await Task(executorPreference: executor) {
            guard Self.namespace(of: "/proc/thread-self/ns/net") == Self.namespace(of: path) else {
                throw NotEntered(path: path, errno: 0)
            }
            return try await body()
        }.value
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.queue.append(job) }
        wakeUp.signal()
    }

    /// Starts the thread and waits until it is in the namespace (or could not enter it).
    private func start(entering path: String) async throws {
        let failure: Int32? = await withCheckedContinuation { continuation in
            Thread {
                let descriptor = open(path, O_RDONLY | O_CLOEXEC)
                let entered = descriptor >= 0 && cnetlink_enter_network_namespace(descriptor) == 0
                let code = errno
                if descriptor >= 0 { close(descriptor) }
                continuation.resume(returning: entered ? nil : code)
                if entered { self.serve() }
            }.start()
        }
        if let failure { throw NotEntered(path: path, errno: failure) }
    }

    /// Runs jobs as they come until stopped; the thread then ends.
    private func serve() {
        while true {
            wakeUp.wait()
            let next = jobs.withLock { state -> UnownedJob?? in
                state.queue.isEmpty ? (state.stopping ? .some(nil) : nil) : state.queue.removeFirst()
            }
            switch next {
            case .some(.some(let job)): job.runSynchronously(on: asUnownedTaskExecutor())
            case .some(.none): return
            case .none: continue
            }
        }
    }

    private func stop() {
        jobs.withLock { $0.stopping = true }
        wakeUp.signal()
    }

    /// The inode of a namespace file: equal for the same namespace.
    private static func namespace(of path: String) -> ino_t? {
        var status = stat()
        return stat(path, &status) == 0 ? status.st_ino : nil
    }

    struct NotEntered: Error, CustomStringConvertible {
        var path: String
        var errno: Int32
        var description: String {
            "could not run in the network namespace \(path)"
                + (errno == 0 ? "" : ": \(String(cString: strerror(errno)))")
        }
    }
}
