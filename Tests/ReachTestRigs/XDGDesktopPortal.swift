import Foundation
import ReachTesting

/// The real `xdg-desktop-portal`, started by hand on a private desktop's session bus, as a
/// desktop session would start it: what every Flatpak app's `GNetworkMonitor` asks (its portal
/// backend calls `org.freedesktop.portal.NetworkMonitor` here), answered from the host's own
/// `g_network_monitor_get_default()`, that is reachd's GIO module once `GIO_EXTRA_MODULES` (or the
/// installed package) provides it. Asked with `gdbus call`, as any client would.
package final class XDGDesktopPortal: Sendable {
    package static let path = "/usr/libexec/xdg-desktop-portal"
    package static let isAvailable =
        FileManager.default.isExecutableFile(atPath: path)
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/gdbus")
    package static let unavailableReason =
        "needs xdg-desktop-portal and gdbus (Debian: xdg-desktop-portal, libglib2.0-bin)"

    private let child: ChildProcess
    private let environment: [String: String]

    /// Starts it with reachd's module and `REACHD_ENDPOINT=endpoint` in its environment, on
    /// `desktop`'s bus, in `namespace` when given; returns once its NetworkMonitor answers.
    package init(
        desktop: PrivateDesktop,
        endpoint: String,
        namespace: TestNamespace?,
        runtimeDirectory: String
    ) async throws {
        try await GLibMonitorProgram.buildModule()
        var environment = desktop.environment
        environment["GIO_USE_NETWORK_MONITOR"] = nil
        environment["GIO_EXTRA_MODULES"] = GLibMonitorProgram.moduleDirectory
        environment["REACHD_ENDPOINT"] = endpoint
        environment["XDG_RUNTIME_DIR"] = runtimeDirectory
        self.environment = environment
        // -r: replace a portal already on the bus (there is none: the bus is the test's).
        let command = TestNamespace.command([Self.path, "--verbose", "--replace"], in: namespace)
        child = try ChildProcess(
            "xdg-desktop-portal",
            executable: command.executable,
            arguments: command.arguments,
            environment: environment
        )
        do {
            try await waitUntil(
                "xdg-desktop-portal's NetworkMonitor answers",
                timeout: .seconds(20),
                every: .milliseconds(50)
            ) {
                guard child.isRunning else {
                    throw ChildProcess.Failed(description: "xdg-desktop-portal exited:\n\(child.errors)")
                }
                return (try? await self.connectivity()) != nil
            }
        } catch {
            await child.stop()
            throw error
        }
    }

    /// `NetworkMonitor.GetConnectivity()`: 1 local, 2 limited, 3 portal, 4 full.
    package func connectivity() async throws -> Int {
        let answer = try await call("GetConnectivity")
        // (uint32 4,)
        guard let number = Int(answer.filter(\.isNumber).dropFirst(2)) else {
            throw ChildProcess.Failed(description: "GetConnectivity answered \(answer)")
        }
        return number
    }

    /// `NetworkMonitor.GetStatus()`: `available`, `metered` and `connectivity`.
    package func status() async throws -> (available: Bool, metered: Bool, connectivity: Int) {
        // ({'available': <true>, 'metered': <false>, 'connectivity': <uint32 4>},)
        let answer = try await call("GetStatus")
        func value(_ key: String) -> Substring? {
            guard let range = answer.range(of: "'\(key)': <") else { return nil }
            return answer[range.upperBound...].prefix { $0 != ">" }
        }
        guard let available = value("available"), let metered = value("metered"),
            let connectivity = value("connectivity").flatMap({ Int($0.split(separator: " ").last ?? "") })
        else { throw ChildProcess.Failed(description: "GetStatus answered \(answer)") }
        return (available == "true", metered == "true", connectivity)
    }

    /// Waits until both calls say `connectivity` (and GetStatus `available`).
    package func waitUntilItSays(connectivity: Int, available: Bool, timeout: Duration = .seconds(10)) async throws {
        var last = "nothing"
        do {
            try await ReachTesting.waitUntil(
                "the portal says \(connectivity)",
                timeout: timeout,
                every: .milliseconds(50)
            ) {
                let status = try await status()
                let number = try await self.connectivity()
                last = "GetStatus \(status), GetConnectivity \(number)"
                return status.connectivity == connectivity && status.available == available && number == connectivity
            }
        } catch {
            throw ChildProcess.Failed(
                description: "the portal never said \(connectivity): last \(last)\n\(child.errors.suffix(3000))"
            )
        }
    }

    private func call(_ method: String) async throws -> String {
        let result = try await runProgram(
            "/usr/bin/gdbus",
            [
                "call", "--session", "--dest", "org.freedesktop.portal.Desktop", "--object-path",
                "/org/freedesktop/portal/desktop", "--method", "org.freedesktop.portal.NetworkMonitor.\(method)",
            ],
            environment: environment
        )
        guard result.status == 0 else { throw ChildProcess.Failed(description: "gdbus: \(result.errors)") }
        return result.output
    }

    package func stop() async {
        await child.stop()
    }
}
