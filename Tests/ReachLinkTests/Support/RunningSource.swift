import Foundation
import Glibc
import Logging
import ReachCore
import ReachLink
import ReachTestRigs
import ReachTesting
import Synchronization
import Testing

/// A ``NetlinkLinkSource`` running inside a test namespace, with what it reported.
final class RunningSource: Sendable {
    private struct Record {
        var latest: LinkSnapshot?
        var count = 0
        /// The most recent reports, oldest first; bounded so storms do not grow the test's memory.
        var recent: [LinkSnapshot] = []
    }

    static let recentLimit = 64

    let source: NetlinkLinkSource
    let namespace: TestNamespace
    /// A class, so the reporting closure can share the (non-copyable) mutex.
    private final class Recorder: Sendable {
        let state = Mutex(Record())
    }

    private let recorder = Recorder()
    private let task = Mutex<Task<Void, any Error>?>(nil)

    init(in namespace: TestNamespace, receiveBufferSize: Int = 4 << 20, logLevel: Logger.Level = .notice) {
        var logger = Logger(label: "reachd.netlink.test")
        logger.logLevel = logLevel
        self.namespace = namespace
        source = NetlinkLinkSource(
            logger: logger,
            networkNamespacePath: namespace.path,
            receiveBufferSize: receiveBufferSize
        )
        let running = Task { [source, recorder] in
            try await source.run { snapshot in
                recorder.state.withLock { record in
                    record.latest = snapshot
                    record.count += 1
                    record.recent.append(snapshot)
                    if record.recent.count > Self.recentLimit { record.recent.removeFirst() }
                }
            }
        }
        task.withLock { $0 = running }
    }

    var latest: LinkSnapshot? { recorder.state.withLock { $0.latest } }
    var reportCount: Int { recorder.state.withLock { $0.count } }
    var recent: [LinkSnapshot] { recorder.state.withLock { $0.recent } }

    /// Waits until the latest report satisfies `condition`; returns it, or nil after `timeout`.
    func waitFor(timeout: Duration = .seconds(5), _ condition: (LinkSnapshot) -> Bool) async throws -> LinkSnapshot? {
        var match: LinkSnapshot?
        do {
            try await waitUntil("a matching snapshot", timeout: timeout) {
                match = latest.flatMap { condition($0) ? $0 : nil }
                return match != nil
            }
        } catch is TimedOutWaiting {
            return nil
        }
        return match
    }

    /// Waits until the latest report matches `ip -j`; records the differences when it never does.
    @discardableResult
    func expectMatchesIP(
        timeout: Duration = .seconds(5),
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> LinkSnapshot? {
        var differences: [String] = ["no snapshot reported"]
        var matched: LinkSnapshot?
        var failure: (any Error)?
        do {
            try await waitUntil("a snapshot that matches ip -j", timeout: timeout) {
                guard let latest = self.latest else { return false }
                // Read ip twice around the comparison so a change in flight is not mistaken for a match.
                let ip: IPJSONState
                do {
                    ip = try await IPJSONState.read(self.namespace)
                } catch {
                    failure = error
                    return true
                }
                differences = IPJSONState.differences(latest, ip)
                if differences.isEmpty, let again = self.latest, again == latest { matched = latest }
                return matched != nil
            }
            if let failure { throw failure }
            return matched
        } catch is TimedOutWaiting {}
        Issue.record(
            "the adapter's snapshot never matched ip -j:\n\(differences.joined(separator: "\n"))",
            sourceLocation: sourceLocation
        )
        return nil
    }

    /// Whether the source's reader thread (the `reachd-netlink` thread in this test's namespace;
    /// other tests run theirs elsewhere) is blocked in a `poll()` without timeout: idle.
    var readerIsIdleInPoll: Bool {
        func inode(_ path: String) -> ino_t? {
            var info = stat()
            return stat(path, &info) == 0 ? info.st_ino : nil
        }
        guard let namespaceInode = inode(namespace.path),
            let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")
        else { return false }
        return threads.contains { thread in
            let folder = "/proc/self/task/\(thread)"
            guard (try? String(contentsOfFile: "\(folder)/comm", encoding: .utf8))?.hasPrefix("reachd-netlink") == true,
                inode("\(folder)/ns/net") == namespaceInode,
                let call = try? String(contentsOfFile: "\(folder)/syscall", encoding: .utf8)
            else { return false }
            // "NUMBER ARG1 ARG2 ARG3 ...": poll (7 on x86_64) with timeout -1 (an int: the register's
            // upper half may be zero or not), or ppoll (271) with no timespec.
            let fields = call.split(separator: " ")
            guard fields.count > 3, let third = UInt64(fields[3].dropFirst(2), radix: 16) else { return false }
            return (fields[0] == "7" && Int32(truncatingIfNeeded: third) == -1) || (fields[0] == "271" && third == 0)
        }
    }

    /// Cancels the run and returns how long `run` took to return.
    @discardableResult
    func stop() async throws -> Duration {
        guard let running = task.withLock({ $0 }) else { return .zero }
        let started = ContinuousClock.now
        running.cancel()
        try await running.value
        return ContinuousClock.now - started
    }
}
