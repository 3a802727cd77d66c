import Foundation
import ReachTesting
import Synchronization

/// The tests' network namespace kit: a throw-away network namespace of the test's own, and what a
/// topology is built of in it: `ip` commands (one, or many in one process), veths to another
/// namespace, sysctls, the `/etc` files `ip netns exec` shows the programs inside, programs run
/// inside (``command(_:)``, ``run(_:input:)``) and code of this process run inside (``enter(_:)``).
///
/// Every namespace of the tests is one of these: the link and probe tests' (``make(_:)``, with
/// ``addVethWithDefaultRoute()``), the fault matrix's two (`MatrixNetwork`), the uplinks' four
/// (`UplinkTopology`), the fleet's (`FleetNetwork`). Its name carries the test process's pid
/// (`rdt<pid>-LABEL-N`), so that `scripts/test-leftovers` tells a crashed run's; ``delete()``
/// removes it with its veths and its `/etc/netns` files.
package final class TestNamespace: Sendable {
    package let name: String

    private static let counter = Atomic<Int>(0)
    package static let ipPath =
        ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        } ?? "ip"

    /// Whether namespaces can be made here: root and `ip`. Decided without starting a process, as
    /// a suite's condition is evaluated on the cooperative pool even when the suite is skipped.
    package static let isAvailable: Bool = geteuid() == 0 && FileManager.default.isExecutableFile(atPath: ipPath)

    package static let unavailableReason =
        "needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) and ip: no test network namespace can be made"

    /// The prefix of every name: `rdt` and the test process's pid.
    private static let prefix = "rdt\(getpid())-"

    private init(name: String) {
        self.name = name
    }

    /// Creates a namespace with a name unique to this process, `rdt<pid>-LABEL-N`.
    package static func make(_ label: String) async throws -> TestNamespace {
        let number = counter.add(1, ordering: .relaxed).newValue
        let namespace = TestNamespace(name: "\(prefix)\(label)-\(number)")
        try await runOffPool([ipPath, "netns", "add", namespace.name])
        return namespace
    }

    /// Creates one namespace per label, each with its loopback up; if one cannot be made, deletes
    /// those made before it.
    package static func make(_ labels: [String]) async throws -> [TestNamespace] {
        var made: [TestNamespace] = []
        do {
            for label in labels {
                let namespace = try await make(label)
                made.append(namespace)
                try await namespace.ip("link", "set", "lo", "up")
            }
            return made
        } catch {
            for namespace in made { await namespace.delete() }
            throw error
        }
    }

    /// Deletes the namespaces this kit named `LABEL…` for a test process that is gone: a crashed
    /// run's, which would still hold their addresses and links.
    package static func deleteLeftovers(labelled label: String) async {
        let names = (try? await runOffPool([ipPath, "netns", "list"])) ?? ""
        for line in names.split(separator: "\n") {
            let name = String(line.split(separator: " ").first ?? "")
            guard name.hasPrefix("rdt"), let dash = name.firstIndex(of: "-"),
                name[name.index(after: dash)...].hasPrefix(label),
                let pid = Int32(name.dropFirst(3).prefix(while: \.isNumber)), pid != getpid(),
                kill(pid, 0) != 0, errno == ESRCH
            else { continue }
            _ = try? await runOffPool([ipPath, "netns", "del", name])
            try? FileManager.default.removeItem(atPath: "/etc/netns/\(name)")
        }
    }

    private let isDeleted = Atomic<Bool>(false)

    /// A safety net only: tests delete explicitly, off the cooperative pool.
    deinit {
        if !isDeleted.load(ordering: .relaxed) {
            _ = try? Self.run([Self.ipPath, "netns", "del", name])
            try? FileManager.default.removeItem(atPath: etcDirectory)
        }
    }

    /// Deleting the namespace also deletes every veth inside it (and so their peers elsewhere), and
    /// the `/etc/netns` files written for it.
    package func delete() async {
        _ = try? await Self.runOffPool([Self.ipPath, "netns", "del", name])
        try? FileManager.default.removeItem(atPath: etcDirectory)
        isDeleted.store(true, ordering: .relaxed)
    }

    package var path: String { "/run/netns/\(name)" }

    // MARK: Building it

    /// `ip -n NAME ARGS...`; throws with stderr when it fails. Runs off the cooperative pool, which
    /// `Process.waitUntilExit` would otherwise block (and with it other tests' adapters).
    @discardableResult
    package func ip(_ arguments: String...) async throws -> String {
        try await Self.runOffPool([Self.ipPath, "-n", name] + arguments)
    }

    /// Runs many `ip` commands (one a line, as `ip -n NAME` takes them) in one process; throws when
    /// any of them failed. A line cannot hold options: `options` (`-6`) are the whole batch's.
    package func ipBatch(_ lines: [String], options: [String] = []) async throws {
        try await Self.runOffPool(
            [Self.ipPath, "-n", name] + options + ["-force", "-batch", "-"],
            input: lines.joined(separator: "\n") + "\n"
        )
    }

    /// Adds the veth pair `interface` (here) and `peer` (in `other`, or in the test process's own
    /// namespace when `nil`), both still down.
    package func addVeth(_ interface: String, peer: String, in other: TestNamespace?) async throws {
        let target = other?.name ?? "\(getpid())"
        try await ip("link", "add", interface, "type", "veth", "peer", "name", peer, "netns", target)
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

    /// `sysctl -qw SETTING...` inside the namespace: a namespace starts with the kernel's defaults,
    /// not the host's (`net.ipv4.ping_group_range` is `1 0`, no group; forwarding off).
    package func sysctl(_ settings: String...) async throws {
        try await execute(["sysctl", "-qw"] + settings)
    }

    /// Writes the namespace's own `/etc/FILE` (`hosts`, `resolv.conf`), which `ip netns exec`
    /// mounts over `/etc` for the programs it runs. In place when the file exists: a program that
    /// already runs inside has it bind-mounted, and would not see a new inode. Written over the old
    /// text and then cut to length, never truncated first, so that a reader meanwhile reads the old
    /// text or a prefix of the new one, never an empty file.
    package func writeEtc(_ file: String, _ text: String) throws {
        try FileManager.default.createDirectory(atPath: etcDirectory, withIntermediateDirectories: true)
        let path = "\(etcDirectory)/\(file)"
        guard let handle = FileHandle(forWritingAtPath: path) else {
            return try text.write(toFile: path, atomically: false, encoding: .utf8)
        }
        defer { try? handle.close() }
        try handle.write(contentsOf: Data(text.utf8))
        try handle.truncate(atOffset: UInt64(text.utf8.count))
    }

    private var etcDirectory: String { "/etc/netns/\(name)" }

    /// The link tests' standard rig: veth rd0 (ours) / rd1 (peer) in this namespace, both up, rd0
    /// with 198.51.100.2/24 and a default route via 198.51.100.1.
    package func addVethWithDefaultRoute() async throws {
        try await ipBatch([
            "link set lo up", "link add rd0 type veth peer name rd1", "link set rd1 up", "link set rd0 up",
            "addr add 198.51.100.2/24 dev rd0", "route add default via 198.51.100.1 dev rd0",
        ])
    }

    // MARK: Running things in it

    /// The command line that runs `command` (a program and its arguments) in this namespace: `ip
    /// netns exec`, which execs, so the process is the program itself, with the namespace's `/etc`.
    package func command(_ command: [String]) -> [String] {
        [Self.ipPath, "netns", "exec", name] + command
    }

    /// `command` as it runs in `namespace`, or as it is when `nil`: for the rigs that start a
    /// program (``ChildProcess``) here or in a namespace.
    package static func command(
        _ command: [String],
        in namespace: TestNamespace?
    ) -> (executable: String, arguments: [String]) {
        let line = namespace?.command(command) ?? command
        return (line[0], Array(line.dropFirst()))
    }

    /// Runs `command` in the namespace to its end, off the cooperative pool, whatever its status.
    package func run(_ command: [String], input: String? = nil) async throws -> ProgramResult {
        let line = self.command(command)
        return try await runProgram(line[0], Array(line.dropFirst()), input: input)
    }

    /// Runs `command` in the namespace to its end; returns its output, or throws with its errors.
    @discardableResult
    package func execute(_ command: [String], input: String? = nil) async throws -> String {
        try await Self.runOffPool(self.command(command), input: input)
    }

    /// Runs `body` on a thread of its own that lives in this namespace (``NamespaceExecutor``):
    /// the sockets it opens, and the threads it starts, are the namespace's.
    package func enter<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await NamespaceExecutor.run(in: path, body)
    }

    // MARK: Commands

    @discardableResult
    package static func runOffPool(_ command: [String], input: String? = nil) async throws -> String {
        try checked(command, await runProgram(command[0], Array(command.dropFirst()), input: input))
    }

    package struct CommandFailed: Error, CustomStringConvertible {
        package var command: [String]
        package var status: Int32
        package var output: String
        package var description: String { "\(command.joined(separator: " ")) exited \(status): \(output)" }

        package init(command: [String], status: Int32, output: String) {
            (self.command, self.status, self.output) = (command, status, output)
        }
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
