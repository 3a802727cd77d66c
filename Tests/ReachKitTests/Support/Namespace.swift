import Foundation
import ReachTestRigs
import Synchronization

/// A throw-away network namespace for the embedded service's test, with `ip` run off the pool.
/// (ReachLinkTests has a fuller one; this is the little the test needs.)
final class Namespace: Sendable {
    let name: String
    static let ip = TestNamespace.ipPath

    /// Whether namespaces can be made here: root, with `ip` installed. (Checked without running
    /// anything: a trait's condition is evaluated on the cooperative pool.)
    static let isAvailable = geteuid() == 0 && FileManager.default.isExecutableFile(atPath: ip)

    init(_ label: String) async throws {
        name = "rkt\(getpid())-\(label)"
        try await Self.run(["netns", "add", name])
    }

    /// `ip -n NAME ARGS...`.
    func ip(_ arguments: String...) async throws {
        try await Self.run(["-n", name] + arguments)
    }

    private let isDeleted = Atomic<Bool>(false)

    func delete() async {
        _ = try? await runProgram(Self.ip, ["netns", "del", name])
        isDeleted.store(true, ordering: .relaxed)
    }

    /// A safety net only: the test deletes it explicitly, off the cooperative pool.
    deinit {
        if !isDeleted.load(ordering: .relaxed) { _ = try? runProgramBlocking(Self.ip, ["netns", "del", name]) }
    }

    private static func run(_ arguments: [String]) async throws {
        let result = try await runProgram(ip, arguments)
        guard result.status == 0 else {
            throw Failed(description: "ip \(arguments.joined(separator: " ")): \(result.errors)")
        }
    }

    struct Failed: Error, CustomStringConvertible {
        let description: String
    }
}
