import Foundation
import ReachTesting
import Synchronization

/// A throwaway desktop for notification tests: an `Xvfb` display, a private session
/// `dbus-daemon` (no service activation, so nothing starts behind the test's back), `dunst` as the
/// notification server, and `dbus-monitor` recording every `Notify` call. Each instance has its own
/// display number and bus; ``stop()`` kills everything it started, by pid, and removes its files.
package final class PrivateDesktop: Sendable {
    static let tools = ["Xvfb", "dbus-daemon", "dbus-monitor", "dunst", "dunstctl", "import"]
    package static let isAvailable = tools.allSatisfy { tool in
        ["/usr/bin", "/bin"].contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)") }
    }
    package static let unavailableReason =
        "needs Xvfb, dbus-daemon, dbus-monitor, dunst and import (Debian: xvfb dbus dunst imagemagick)"

    private let directory: TemporaryDirectory
    /// `:123`.
    package let display: String
    /// The bus's address as it printed it (with its guid).
    package let busAddress: String
    /// The same bus by its socket alone, as `$XDG_RUNTIME_DIR/bus` is known: still valid for a bus
    /// restarted by ``restartBus()`` (which has a new guid).
    package var socketAddress: String { "unix:path=\(directory)/bus" }
    private let xvfb: ChildProcess
    private let bus: Mutex<ChildProcess>
    private let monitor: ChildProcess
    private let server = Mutex<ChildProcess?>(nil)

    /// What a program needs to use this desktop's bus and display.
    package var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = display
        environment["DBUS_SESSION_BUS_ADDRESS"] = busAddress
        return environment
    }

    private init(
        directory: TemporaryDirectory,
        display: String,
        busAddress: String,
        xvfb: ChildProcess,
        bus: ChildProcess,
        monitor: ChildProcess
    ) {
        self.directory = directory
        self.display = display
        self.busAddress = busAddress
        self.xvfb = xvfb
        self.bus = Mutex(bus)
        self.monitor = monitor
    }

    /// Starts the display, the bus, the monitor and dunst; returns once dunst owns
    /// `org.freedesktop.Notifications`.
    package static func start() async throws -> PrivateDesktop {
        let directory = try TemporaryDirectory("desktop")
        // A display number nobody holds: the lock file tells.
        var number = Int.random(in: 200...900)
        while FileManager.default.fileExists(atPath: "/tmp/.X\(number)-lock") { number = Int.random(in: 200...900) }
        let xvfb = try ChildProcess(
            "Xvfb",
            executable: "/usr/bin/Xvfb",
            arguments: [":\(number)", "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
            errorLog: "\(directory)/xvfb.log"
        )
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(directory)/bus</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """
        try config.write(toFile: "\(directory)/session.conf", atomically: true, encoding: .utf8)
        let bus = try startBus(in: directory)
        let address: String
        do {
            address = try await bus.waitForLine { $0.hasPrefix("unix:") }
            try await waitUntil("Xvfb :\(number) listens", timeout: .seconds(10)) {
                FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)") || !xvfb.isRunning
            }
        } catch {
            await bus.waitForExit(timeout: .zero)
            await stopDisplay(xvfb, number: number)
            throw error
        }
        let monitor = try ChildProcess(
            "dbus-monitor",
            executable: "/usr/bin/dbus-monitor",
            arguments: [
                "--address", address, "type='method_call',interface='org.freedesktop.Notifications',member='Notify'",
            ],
            errorLog: "\(directory)/dbus-monitor.log"
        )
        let desktop = PrivateDesktop(
            directory: directory,
            display: ":\(number)",
            busAddress: address,
            xvfb: xvfb,
            bus: bus,
            monitor: monitor
        )
        do {
            try await waitUntil("dbus-monitor is watching", timeout: .seconds(10)) {
                monitor.output.contains { $0.contains("NameAcquired") || $0.contains("NameLost") } || !monitor.isRunning
            }
            try await desktop.startNotificationServer()
        } catch {
            await desktop.stop()
            throw error
        }
        return desktop
    }

    private static func startBus(in directory: TemporaryDirectory) throws -> ChildProcess {
        try ChildProcess(
            "dbus-daemon",
            executable: "/usr/bin/dbus-daemon",
            arguments: ["--config-file=\(directory)/session.conf", "--nofork", "--print-address=1"],
            errorLog: "\(directory)/dbus-daemon.log"
        )
    }

    /// Kills the bus (dunst and the monitor lose it too) and, after `gap`, starts a new one on the
    /// same socket; returns once it listens.
    package func restartBus(after gap: Duration) async throws {
        let old = bus.withLock { $0 }
        old.signal(SIGKILL)
        await old.waitForExit()
        try? FileManager.default.removeItem(atPath: "\(directory)/bus")
        try await Task.sleep(for: gap)  // the outage the test puts its subject through: a stimulus, not synchronisation
        let new = try Self.startBus(in: directory)
        bus.withLock { $0 = new }
        try await new.waitForLine { $0.hasPrefix("unix:") }
    }

    /// Starts dunst (again) and waits until it owns `org.freedesktop.Notifications`.
    package func startNotificationServer() async throws {
        let dunstrc = "\(directory)/dunstrc"
        // Icons from Adwaita, so the screenshot shows the one named in the notification. The
        // context menu's "dmenu" picks what ``chooseAction(key:)`` asks for, as a person would.
        try """
        [global]
            font = DejaVu Sans 11
            width = 420
            icon_path = /usr/share/icons/Adwaita/48x48/legacy/:/usr/share/icons/Adwaita/48x48/status/
            min_icon_size = 32
            max_icon_size = 48
            dmenu = \(directory)/menu-chooser
        """.write(toFile: dunstrc, atomically: true, encoding: .utf8)
        try await writeExecutable(
            """
            #!/bin/sh
            grep -m1 -F -e "$(cat '\(directory)/menu-choice')"
            """,
            to: "\(directory)/menu-chooser"
        )
        let dunst = try ChildProcess(
            "dunst",
            executable: "/usr/bin/dunst",
            arguments: ["-config", dunstrc],
            errorLog: "\(directory)/dunst.log",
            environment: environment
        )
        server.withLock { $0 = dunst }
        try await waitUntil("dunst owns org.freedesktop.Notifications", timeout: .seconds(10)) {
            await (try? self.dunstctl(["count", "displayed"]).status) == 0 || !dunst.isRunning
        }
        guard dunst.isRunning else {
            throw ChildProcess.Failed(
                description:
                    "dunst exited: \((try? String(contentsOfFile: "\(directory)/dunst.log", encoding: .utf8)) ?? "")"
            )
        }
    }

    /// Kills dunst, as a crash would, and waits until it is gone.
    package func killNotificationServer() async {
        guard let dunst = server.withLock({ $0 }) else { return }
        dunst.signal(SIGKILL)
        await dunst.waitForExit()
        server.withLock { $0 = nil }
    }

    /// Runs `dunstctl` against this desktop's dunst.
    @discardableResult
    package func dunstctl(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await run("/usr/bin/dunstctl", arguments)
    }

    /// Invokes the action `key` from dunst's context menu (`dunstctl context`), whose lines read
    /// `#LABEL (SUMMARY) [ID,KEY]`: a person choosing one of several buttons.
    package func chooseAction(key: String) async throws {
        try ",\(key)]".write(toFile: "\(directory)/menu-choice", atomically: true, encoding: .utf8)
        let result = try await dunstctl(["context"])
        guard result.status == 0 else {
            throw ChildProcess.Failed(description: "dunstctl context failed: \(result.output)")
        }
    }

    /// How many notifications dunst shows now.
    package func displayedCount() async throws -> Int? {
        Int(try await dunstctl(["count", "displayed"]).output.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Every `Notify` call seen on the bus so far, in order.
    package var notifyCalls: [NotifyCall] { NotifyCall.parse(monitor.output) }

    /// Writes a PNG of the whole screen to `path`.
    package func screenshot(to path: String) async throws {
        let result = try await run("/usr/bin/import", ["-display", display, "-window", "root", path])
        guard result.status == 0 else { throw ChildProcess.Failed(description: "import failed: \(result.output)") }
    }

    /// Kills dunst, dbus-monitor, the bus and the display. The directory goes with the desktop.
    package func stop() async {
        await killNotificationServer()
        for child in [monitor, bus.withLock { $0 }] {
            child.signal(SIGKILL)
            await child.waitForExit()
        }
        await Self.stopDisplay(xvfb, number: Int(display.dropFirst()) ?? 0)
    }

    /// Kills Xvfb and removes the lock file and socket it leaves in /tmp (X puts them there
    /// whatever TMPDIR says), unless another server has taken the display number meanwhile.
    private static func stopDisplay(_ xvfb: ChildProcess, number: Int) async {
        xvfb.signal(SIGKILL)
        await xvfb.waitForExit()
        let lock = "/tmp/.X\(number)-lock"
        guard let owner = try? String(contentsOfFile: lock, encoding: .utf8),
            Int32(owner.trimmingCharacters(in: .whitespacesAndNewlines)) == xvfb.processIdentifier
        else { return }
        unlink("/tmp/.X11-unix/X\(number)")
        unlink(lock)
    }

    private func run(_ executable: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        let result = try await runProgram(executable, arguments, environment: environment)
        return (result.status, result.output + result.errors)
    }
}

/// One `org.freedesktop.Notifications.Notify` call as `dbus-monitor` printed it.
package struct NotifyCall: Sendable, Hashable {
    package var appName = ""
    package var replacesID: UInt32 = 0
    package var icon = ""
    package var summary = ""
    package var body = ""
    /// Keys and labels, in order.
    package var actions: [String] = []
    /// Each hint's value as dbus-monitor prints it, such as `byte 1` or `string "network.connected"`.
    package var hints: [String: String] = [:]
    package var expireTimeout: Int32 = -1
    /// When the bus passed the call on, as dbus-monitor stamped it (seconds since the epoch).
    package var time: Double?

    /// Splits dbus-monitor's output into calls: a `method call ... member=Notify` line, then the
    /// arguments indented by three spaces, nested values deeper.
    static func parse(_ lines: [String]) -> [NotifyCall] {
        var calls: [NotifyCall] = []
        var arguments: [String]?
        var time: Double?
        func finish() {
            // A call dbus-monitor is still printing (all eight arguments not there yet) waits.
            if let arguments, var call = NotifyCall(arguments) {
                call.time = time
                calls.append(call)
            }
            arguments = nil
        }
        for line in lines {
            if line.hasPrefix("method call") || line.hasPrefix("signal") || line.hasPrefix("method return")
                || line.hasPrefix("error")
            {
                finish()
                if line.hasPrefix("method call"), line.contains("member=Notify") {
                    arguments = []
                    time = line.split(separator: " ").first { $0.hasPrefix("time=") }.flatMap {
                        Double($0.dropFirst("time=".count))
                    }
                }
            } else if arguments != nil {
                arguments?.append(line)
            }
        }
        finish()
        return calls
    }

    private init?(_ lines: [String]) {
        // Top-level values are indented by exactly three spaces.
        var topLevel: [String] = []
        var section = -1
        var pendingHint: String?
        for line in lines {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            let depth = line.prefix { $0 == " " }.count
            if depth == 3 {
                topLevel.append(trimmed)
                if trimmed.hasPrefix("array [") { section += 1 }
                continue
            }
            if section == 0, trimmed.hasPrefix("string ") {
                actions.append(Self.unquoted(trimmed))
            } else if section == 1 {
                if trimmed.hasPrefix("string "), pendingHint == nil {
                    pendingHint = Self.unquoted(trimmed)
                } else if trimmed.hasPrefix("variant"), let name = pendingHint {
                    hints[name] = trimmed.dropFirst("variant".count).trimmingCharacters(in: .whitespaces)
                    pendingHint = nil
                }
            }
        }
        let scalars = topLevel.filter { !$0.hasPrefix("array [") && $0 != "]" }
        guard scalars.count == 6, section == 1, scalars[5].hasPrefix("int32 ") else { return nil }
        appName = Self.unquoted(scalars[0])
        replacesID = UInt32(scalars[1].split(separator: " ").last ?? "") ?? 0
        icon = Self.unquoted(scalars[2])
        summary = Self.unquoted(scalars[3])
        body = Self.unquoted(scalars[4])
        expireTimeout = Int32(scalars[5].split(separator: " ").last ?? "") ?? -1
    }

    /// `string "abc"` → `abc`.
    private static func unquoted(_ text: String) -> String {
        guard let first = text.firstIndex(of: "\""), let last = text.lastIndex(of: "\""), first < last else {
            return text
        }
        return String(text[text.index(after: first)..<last])
    }
}
