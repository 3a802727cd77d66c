import Foundation
import ReachTesting
import Synchronization

/// A throw-away network namespace with helpers to run `ip` and `sysctl` in it, and to run code in
/// it (``enter(_:)``); deleted by `delete()` or at deinit.
package final class TestNamespace: Sendable {
    package let name: String

    private static let counter = Atomic<Int>(0)
    package static let ipPath =
        ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        } ?? "ip"

    /// Whether this process may create namespaces (CAP_NET_ADMIN) and enter them (CAP_SYS_ADMIN):
    /// found out once by trying.
    package static let isAvailable: Bool = {
        let probe = "rdt-probe-\(getpid())"
        guard (try? run([ipPath, "netns", "add", probe])) != nil else { return false }
        defer { _ = try? run([ipPath, "netns", "del", probe]) }
        return access("/run/netns/\(probe)", R_OK) == 0 && geteuid() == 0
    }()

    package static let unavailableReason =
        "needs CAP_NET_ADMIN and CAP_SYS_ADMIN: `ip netns add` failed, so no test network namespace can be made"

    private init(name: String) {
        self.name = name
    }

    /// Creates a namespace with a name unique to this process and test.
    package static func make(_ label: String) async throws -> TestNamespace {
        let number = counter.add(1, ordering: .relaxed).newValue
        let namespace = TestNamespace(name: "rdt\(getpid())-\(label)-\(number)")
        try await runOffPool([ipPath, "netns", "add", namespace.name])
        return namespace
    }

    private let isDeleted = Atomic<Bool>(false)

    /// A safety net only: tests delete explicitly, off the cooperative pool.
    deinit {
        if !isDeleted.load(ordering: .relaxed) { _ = try? Self.run([Self.ipPath, "netns", "del", name]) }
    }

    /// Deleting the namespace also deletes every veth inside it.
    package func delete() async {
        _ = try? await Self.runOffPool([Self.ipPath, "netns", "del", name])
        isDeleted.store(true, ordering: .relaxed)
    }

    package var path: String { "/run/netns/\(name)" }

    /// `ip -n NAME ARGS...`; throws with stderr when it fails. Runs off the cooperative pool, which
    /// `Process.waitUntilExit` would otherwise block (and with it other tests' adapters).
    @discardableResult
    package func ip(_ arguments: String...) async throws -> String {
        try await Self.runOffPool([Self.ipPath, "-n", name] + arguments)
    }

    /// Runs many `ip` commands in one process (`ip -n NAME -batch -`).
    package func ipBatch(_ lines: [String]) async throws {
        try await Self.runOffPool(
            [Self.ipPath, "-n", name, "-force", "-batch", "-"],
            input: lines.joined(separator: "\n") + "\n"
        )
    }

    /// Waits until `interface` is operationally up: the kernel turns a veth up (and gives it a queue
    /// that sends) up to a second after both its ends are set up; what is sent before is dropped.
    package func waitUntilUp(_ interface: String, timeout: Duration = .seconds(5)) async throws {
        do {
            try await waitUntil("\(interface) up in \(name)", timeout: timeout) {
                try await ip("-j", "link", "show", "dev", interface).contains("\"operstate\":\"UP\"")
            }
        } catch is TimedOutWaiting {
            throw CommandFailed(command: ["wait for \(interface) up in \(name)"], status: 1, output: "")
        }
    }

    /// `sysctl -qw SETTING...` inside the namespace (`ip netns exec`): a namespace starts with the
    /// kernel's defaults, not the host's (`net.ipv4.ping_group_range` is `1 0`, no group).
    package func sysctl(_ settings: String...) async throws {
        try await Self.runOffPool([Self.ipPath, "netns", "exec", name, "sysctl", "-qw"] + settings)
    }

    /// Runs `body` on a thread of its own that lives in this namespace (``NamespaceExecutor``):
    /// the sockets it opens, and the threads it starts, are the namespace's.
    package func enter<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await NamespaceExecutor.run(in: path, body)
    }

    @discardableResult
    package static func runOffPool(_ command: [String], input: String? = nil) async throws -> String {
        try checked(command, await runProgram(command[0], Array(command.dropFirst()), input: input))
    }

    /// The standard rig: veth rd0 (ours) / rd1 (peer) in this namespace, both up, rd0 with
    /// 198.51.100.2/24 and a default route via 198.51.100.1.
    package func addVethWithDefaultRoute() async throws {
        try await ip("link", "set", "lo", "up")
        try await ip("link", "add", "rd0", "type", "veth", "peer", "name", "rd1")
        try await ip("link", "set", "rd1", "up")
        try await ip("link", "set", "rd0", "up")
        try await ip("addr", "add", "198.51.100.2/24", "dev", "rd0")
        try await ip("route", "add", "default", "via", "198.51.100.1", "dev", "rd0")
    }

    package struct CommandFailed: Error, CustomStringConvertible {
        package var command: [String]
        package var status: Int32
        package var output: String
        package var description: String { "\(command.joined(separator: " ")) exited \(status): \(output)" }
    }

    @discardableResult
    package static func run(_ command: [String]) throws -> String {
        try checked(command, runProgramBlocking(command[0], Array(command.dropFirst())))
    }

    private static func checked(_ command: [String], _ result: ProgramResult) throws -> String {
        guard result.status == 0 else {
            throw CommandFailed(command: command, status: result.status, output: result.errors + result.output)
        }
        return result.output
    }
}
