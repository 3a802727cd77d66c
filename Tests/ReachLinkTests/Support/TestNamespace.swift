import Foundation
import ReachTesting
import Synchronization
import Testing

/// A throw-away network namespace with helpers to run `ip` in it; deleted by `delete()` or at deinit.
final class TestNamespace: Sendable {
    let name: String

    private static let counter = Atomic<Int>(0)
    static let ipPath = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "ip"

    /// Whether this process may create namespaces (CAP_NET_ADMIN) and enter them (CAP_SYS_ADMIN):
    /// found out once by trying.
    static let isAvailable: Bool = {
        let probe = "rdt-probe-\(getpid())"
        guard (try? run([ipPath, "netns", "add", probe])) != nil else { return false }
        defer { _ = try? run([ipPath, "netns", "del", probe]) }
        return access("/run/netns/\(probe)", R_OK) == 0 && geteuid() == 0
    }()

    static let unavailableReason: Comment = "needs CAP_NET_ADMIN and CAP_SYS_ADMIN: `ip netns add` failed, so no test network namespace can be made"

    private init(name: String) {
        self.name = name
    }

    /// Creates a namespace with a name unique to this process and test.
    static func make(_ label: String) async throws -> TestNamespace {
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
    func delete() async {
        _ = try? await Self.runOffPool([Self.ipPath, "netns", "del", name])
        isDeleted.store(true, ordering: .relaxed)
    }

    var path: String { "/run/netns/\(name)" }

    /// `ip -n NAME ARGS...`; throws with stderr when it fails. Runs off the cooperative pool, which
    /// `Process.waitUntilExit` would otherwise block (and with it other tests' adapters).
    @discardableResult
    func ip(_ arguments: String...) async throws -> String {
        try await Self.runOffPool([Self.ipPath, "-n", name] + arguments)
    }

    /// Runs many `ip` commands in one process (`ip -n NAME -batch -`).
    func ipBatch(_ lines: [String]) async throws {
        try await Self.runOffPool([Self.ipPath, "-n", name, "-force", "-batch", "-"], input: lines.joined(separator: "\n") + "\n")
    }

    @discardableResult
    static func runOffPool(_ command: [String], input: String? = nil) async throws -> String {
        try checked(command, await runProgram(command[0], Array(command.dropFirst()), input: input))
    }

    /// The standard rig: veth rd0 (ours) / rd1 (peer) in this namespace, both up, rd0 with
    /// 198.51.100.2/24 and a default route via 198.51.100.1.
    func addVethWithDefaultRoute() async throws {
        try await ip("link", "set", "lo", "up")
        try await ip("link", "add", "rd0", "type", "veth", "peer", "name", "rd1")
        try await ip("link", "set", "rd1", "up")
        try await ip("link", "set", "rd0", "up")
        try await ip("addr", "add", "198.51.100.2/24", "dev", "rd0")
        try await ip("route", "add", "default", "via", "198.51.100.1", "dev", "rd0")
    }

    struct CommandFailed: Error, CustomStringConvertible {
        var command: [String]
        var status: Int32
        var output: String
        var description: String { "\(command.joined(separator: " ")) exited \(status): \(output)" }
    }

    @discardableResult
    static func run(_ command: [String]) throws -> String {
        try checked(command, runProgramBlocking(command[0], Array(command.dropFirst())))
    }

    private static func checked(_ command: [String], _ result: ProgramResult) throws -> String {
        guard result.status == 0 else {
            throw CommandFailed(command: command, status: result.status, output: result.errors + result.output)
        }
        return result.output
    }
}
