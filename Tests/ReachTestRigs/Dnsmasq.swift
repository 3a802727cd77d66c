import Foundation
import ReachTesting
import Synchronization

/// A real resolver for a test: dnsmasq (Debian's `dnsmasq-base`) in a network namespace of the
/// test's own, answering from the records it is given and nothing else (no upstream, no
/// `/etc/hosts`): what a `dns` target asks, started and stopped as the test needs.
///
/// It runs as a daemon, not a child of the test (with dnsmasq a child, programs the test ran after
/// it were seen never to be reaped); its parent exits once it is ready or has failed, saying why.
/// Stopped, queries to its address are refused (ICMP port unreachable).
package final class Dnsmasq: Sendable {
    package static let path =
        ["/usr/sbin/dnsmasq", "/sbin/dnsmasq"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "dnsmasq"
    /// Whether it is installed (`scripts/test` installs `dnsmasq-base`).
    package static let isAvailable = FileManager.default.isExecutableFile(atPath: path)

    private let namespace: TestNamespace
    private let directory: TemporaryDirectory
    private let configuration: String
    private let pid = Mutex<Int32?>(nil)

    /// - Parameters:
    ///   - addresses: Where it listens, port 53.
    ///   - records: dnsmasq configuration lines: `host-record=`, `txt-record=`, `local=/zone/` (so
    ///     that a name of the zone it has no record of is NXDOMAIN; any other name is REFUSED).
    package init(namespace: TestNamespace, addresses: [String], records: [String]) throws {
        self.namespace = namespace
        directory = try TemporaryDirectory("dnsmasq")
        configuration =
            (["no-resolv", "no-hosts", "no-poll", "bind-interfaces"] + addresses.map { "listen-address=\($0)" }
            + records + [
                "pid-file=\(directory.path)/dnsmasq.pid", "dhcp-leasefile=\(directory.path)/dnsmasq.leases",
                "user=root", "group=root", "log-facility=\(directory.path)/dnsmasq.log",
            ]).joined(separator: "\n") + "\n"
    }

    /// Starts it (again); it listens once this returns (its parent exits after binding).
    package func start() async throws {
        await stop()
        let pidFile = "\(directory.path)/dnsmasq.pid"
        try? FileManager.default.removeItem(atPath: pidFile)
        try configuration.write(toFile: "\(directory.path)/dnsmasq.conf", atomically: true, encoding: .utf8)
        let command =
            "exec \(TestNamespace.ipPath) netns exec \(namespace.name) \(Self.path) --conf-file=\(directory.path)/dnsmasq.conf </dev/null >/dev/null 2>\(directory.path)/dnsmasq.stderr"
        let started = try await runProgram("/bin/sh", ["-c", command])
        let startedPID = (try? String(contentsOfFile: pidFile, encoding: .utf8)).flatMap {
            Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        guard started.status == 0, let startedPID else {
            let errors = (try? String(contentsOfFile: "\(directory.path)/dnsmasq.stderr", encoding: .utf8)) ?? ""
            throw TestNamespace.CommandFailed(command: ["dnsmasq"], status: started.status, output: errors)
        }
        pid.withLock { $0 = startedPID }
    }

    /// Stops it (SIGTERM, SIGKILL after 5 s) and waits until it is gone; nothing when it is not running.
    package func stop() async {
        guard let running = pid.withLock({ $0.take() }) else { return }
        kill(running, SIGTERM)
        if (try? await waitUntil("dnsmasq \(running) to stop", timeout: .seconds(5)) { kill(running, 0) != 0 }) == nil {
            kill(running, SIGKILL)
            try? await waitUntil("dnsmasq \(running) to go") { kill(running, 0) != 0 }
        }
    }

    /// A safety net: a test that ends early must not leave it running.
    deinit {
        if let running = pid.withLock({ $0 }) { kill(running, SIGKILL) }
    }
}
