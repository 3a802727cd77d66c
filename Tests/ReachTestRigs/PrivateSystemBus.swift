import Foundation
import ReachTesting

/// A private, system-like `dbus-daemon` (configured by `bus.conf`) listening on a unix socket in a
/// temporary directory of its own, with a logind stand-in (`login1-standin.py`) owning
/// `org.freedesktop.login1` on it.
package final class PrivateSystemBus: Sendable {
    package static let daemonPath: String? = ["/usr/bin/dbus-daemon", "/bin/dbus-daemon"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
    package static let isAvailable = daemonPath != nil
    package static let unavailableReason = "needs dbus-daemon (Debian package dbus-daemon, pulled in by dbus)"

    /// The system Python, which has python3-dbus (not a pyenv `python3` on PATH).
    package static let python = "/usr/bin/python3"
    static let supportDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appending(
        path: "SystemBus"
    ).path

    private let directory: TemporaryDirectory
    /// The address dbus-daemon printed, such as `unix:path=/tmp/.../system_bus_socket,guid=...`.
    package let address: String
    private let daemon: ChildProcess

    private init(directory: TemporaryDirectory, address: String, daemon: ChildProcess) {
        self.directory = directory
        self.address = address
        self.daemon = daemon
    }

    /// Starts dbus-daemon and waits until it prints its address (it listens by then).
    package static func start() async throws -> PrivateSystemBus {
        let directory = try TemporaryDirectory("system-bus")
        let daemon = try ChildProcess(
            "dbus-daemon",
            executable: daemonPath ?? "dbus-daemon",
            arguments: [
                "--config-file=\(supportDirectory)/bus.conf", "--nofork", "--print-address=1",
                "--address=unix:path=\(directory)/system_bus_socket",
            ],
            errorLog: "\(directory)/dbus-daemon.log"
        )
        do {
            let address = try await daemon.waitForLine { $0.hasPrefix("unix:") }
            return PrivateSystemBus(directory: directory, address: address, daemon: daemon)
        } catch {
            await daemon.waitForExit(timeout: .zero)
            throw error
        }
    }

    /// An address in this bus's directory where nothing listens.
    package var deadAddress: String { "unix:path=\(directory)/nothing-here" }

    /// Kills dbus-daemon with SIGKILL, as a crash would, and waits until it is gone.
    package func kill() async {
        daemon.signal(SIGKILL)
        await daemon.waitForExit()
    }

    /// Stops dbus-daemon; the directory goes with the bus. SIGKILL: children of the test runner
    /// inherit a signal mask with SIGTERM blocked, and nothing here needs a graceful exit.
    package func stop() async {
        daemon.signal(SIGKILL)
        await daemon.waitForExit()
    }

    /// Starts the logind stand-in and waits until it owns org.freedesktop.login1.
    package func startLogind() async throws -> LogindStandIn {
        try await LogindStandIn.start(on: self)
    }
}

/// `login1-standin.py`: owns org.freedesktop.login1 and emits PrepareForSleep on request.
package final class LogindStandIn: Sendable {
    private let process: ChildProcess

    private init(process: ChildProcess) {
        self.process = process
    }

    fileprivate static func start(on bus: PrivateSystemBus) async throws -> LogindStandIn {
        let process = try ChildProcess(
            "login1-standin.py",
            executable: PrivateSystemBus.python,
            arguments: ["\(PrivateSystemBus.supportDirectory)/login1-standin.py", bus.address]
        )
        do {
            try await process.waitForLine { $0 == "ready" }
        } catch {
            await process.waitForExit(timeout: .zero)
            throw error
        }
        return LogindStandIn(process: process)
    }

    /// Emits PrepareForSleep(true) as logind does before suspending.
    package func sleep() async throws { try await send("sleep") }
    /// Emits PrepareForSleep(false) as logind does after resuming.
    package func wake() async throws { try await send("wake") }
    /// Emits PrepareForSleep(true) from a connection that does not own org.freedesktop.login1.
    package func spoofSleep() async throws { try await send("spoof-sleep") }

    /// Sends a command and waits until the stand-in has handed the signal to the bus.
    private func send(_ command: String) async throws {
        let sentBefore = process.output.count { $0 == "sent \(command)" }
        try process.writeLine(command)
        let process = process
        do {
            try await waitUntil("the logind stand-in to confirm \(command)") {
                process.output.count(where: { $0 == "sent \(command)" }) > sentBefore
            }
        } catch is TimedOutWaiting {
            throw ChildProcess.Failed(
                description: "the logind stand-in did not confirm \(command); it printed \(process.output)"
            )
        }
    }

    /// Stops the stand-in. Not by the end of stdin alone: a child spawned meanwhile (tests run in
    /// parallel) may have inherited the pipe's write end and keep it open. SIGKILL, since children
    /// of the test runner inherit a signal mask with SIGTERM blocked.
    package func stop() async {
        process.closeInput()
        process.signal(SIGKILL)
        await process.waitForExit()
    }
}
