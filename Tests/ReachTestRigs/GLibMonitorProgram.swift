import Foundation
import ReachTesting

/// A GLib program asking `g_network_monitor_get_default()`, with reachd's GIO module
/// (`gio-module/`) on `GIO_EXTRA_MODULES`: `Clients/gio_monitor.py` through GObject introspection,
/// as GNOME's programs are, or the module's own `monitor-watch` in C (which valgrind runs). Each
/// prints one JSON line per thing it sees: `init`, `start`, every `network-changed` as `changed`,
/// and the answer to every `reach HOST PORT` it is sent.
package final class GLibMonitorProgram: Sendable {
    /// GLib's `GNetworkConnectivity`.
    package enum Connectivity: Int, Sendable, CustomStringConvertible {
        case local = 1
        case limited, portal, full

        package var description: String {
            switch self {
            case .local: "LOCAL"
            case .limited: "LIMITED"
            case .portal: "PORTAL"
            case .full: "FULL"
            }
        }
    }

    /// One line the program printed.
    package struct Seen: Decodable, Sendable {
        package struct Failure: Decodable, Sendable {
            package let code: Int
            package let message: String
        }

        package let event: String
        package let type: String?
        package let connectivity: Int?
        package let available: Bool?
        package let seconds: Double?
        package let address: String?
        package let reachable: Bool?
        package let error: Failure?

        package var state: String {
            "\(Connectivity(rawValue: connectivity ?? 0).map(\.description) ?? "?") available=\(available ?? false)"
        }
    }

    package static let moduleDirectory = BuiltProducts.packageRoot.appending(path: "gio-module/.build").path
    package static let python =
        URL(filePath: #filePath).deletingLastPathComponent().appending(path: "Clients/gio_monitor.py").path
    /// GLib's own backend, which GLib picks without reachd's module.
    package static let netlinkType = "GNetworkMonitorNetlink"
    package static let moduleType = "ReachdNetworkMonitor"

    /// GLib's headers (to build the module) and PyGObject (Debian: libglib2.0-dev, python3-gi).
    package static let isAvailable =
        FileManager.default.fileExists(atPath: "/usr/include/glib-2.0/gio/gio.h")
        && FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/gi/__init__.py")
    package static let unavailableReason = "needs libglib2.0-dev and python3-gi"

    /// `make -C gio-module`, once per test process (it is quick, and does nothing when built).
    private static let built = Task {
        let result = try await runProgram(
            "/usr/bin/make",
            ["-s", "-C", "\(BuiltProducts.packageRoot.path)/gio-module"]
        )
        guard result.status == 0 else {
            throw ChildProcess.Failed(description: "make -C gio-module failed:\n\(result.output)\(result.errors)")
        }
    }

    package static func buildModule() async throws { try await built.value }

    private let child: ChildProcess

    /// Starts the program with reachd's module and `REACHD_ENDPOINT=endpoint` (a unix socket path
    /// or `http://127.0.0.1:PORT`).
    /// - Parameters:
    ///   - namespace: A network namespace to run it in, where its netlink monitor then looks.
    ///   - command: The program and its arguments; the Python client by default.
    package init(
        endpoint: String,
        namespace: TestNamespace? = nil,
        command: [String] = ["/usr/bin/python3", GLibMonitorProgram.python],
        environment extra: [String: String] = [:]
    ) async throws {
        try await Self.buildModule()
        var environment = ProcessInfo.processInfo.environment
        environment["GIO_USE_NETWORK_MONITOR"] = nil
        environment["GIO_EXTRA_MODULES"] = Self.moduleDirectory
        environment["REACHD_ENDPOINT"] = endpoint
        // The module's debug lines (connection lost, trying again) go to stderr, for a failure's report.
        environment["G_MESSAGES_DEBUG"] = "reachd"
        let command = TestNamespace.command(command, in: namespace)
        child = try ChildProcess(
            "GLib program",
            executable: command.executable,
            arguments: command.arguments,
            environment: environment.merging(extra) { $1 }
        )
    }

    /// Everything it printed so far, in order.
    package var seen: [Seen] {
        child.output.compactMap { try? JSONDecoder().decode(Seen.self, from: Data($0.utf8)) }
    }

    /// What it said at start: which backend GLib chose, how long that took, and its state.
    package func start(timeout: Duration = .seconds(20)) async throws -> (backend: Seen, initSeconds: Double) {
        try await child.waitForLine(timeout: timeout) { $0.contains("\"event\": \"start\"") }
        let lines = seen
        guard let start = lines.first(where: { $0.event == "start" }),
            let initialise = lines.first(where: { $0.event == "init" })
        else { throw ChildProcess.Failed(description: "the GLib program printed \(child.output)") }
        return (start, initialise.seconds ?? .infinity)
    }

    /// Waits for a `network-changed` signal, after the first `after` lines, whose handler read
    /// `connectivity` (and `available`, when given).
    @discardableResult
    package func waitForChange(
        to connectivity: Connectivity,
        available: Bool? = nil,
        after mark: Int,
        timeout: Duration = .seconds(15)
    ) async throws -> Seen {
        do {
            return try await waitFor("a network-changed to \(connectivity)", timeout: timeout) {
                guard child.isRunning else { throw ChildProcess.Failed(description: "the GLib program exited") }
                return seen.dropFirst(mark).first {
                    $0.event == "changed" && $0.connectivity == connectivity.rawValue
                        && (available == nil || $0.available == available)
                }
            }
        } catch {
            throw ChildProcess.Failed(description: "\(error)\n\(report)")
        }
    }

    /// How many lines it has printed: a mark for ``waitForChange(to:available:after:timeout:)``.
    package var mark: Int { seen.count }

    /// The latest state it printed.
    package var latest: Seen? { seen.last { $0.event == "changed" || $0.event == "start" } }

    /// Asks `g_network_monitor_can_reach_async()` (and the blocking call) about `host:port`.
    package func reach(_ host: String, _ port: Int, timeout: Duration = .seconds(15)) async throws -> Seen {
        let mark = self.mark
        try child.writeLine("reach \(host) \(port)")
        return try await waitFor("can_reach(\(host):\(port))", timeout: timeout) {
            seen.dropFirst(mark).first { $0.event == "reach" && $0.address == "\(host):\(port)" }
        }
    }

    /// What it printed and logged, for a failure.
    package var report: String {
        "the GLib program printed:\n\(child.output.joined(separator: "\n"))\nand logged:\n\(child.errors)"
    }

    /// Closes its stdin (it exits) and returns its status and output.
    package func finish(timeout: Duration = .seconds(30)) async -> ProgramResult {
        child.closeInput()
        return await child.finish(timeout: timeout)
    }

    package func stop() async {
        child.closeInput()
        await child.stop()
    }
}
