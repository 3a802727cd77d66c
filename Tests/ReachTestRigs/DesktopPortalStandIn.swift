import Foundation

/// A stand-in for the desktop portal (xdg-desktop-portal) on a test's session bus: owns
/// `org.freedesktop.portal.Desktop` and serves `org.freedesktop.portal.OpenURI.OpenURI` at
/// `/org/freedesktop/portal/desktop` with python3-dbus, recording every call instead of starting a
/// browser. A D-Bus service the opener under test has never seen, as the real one would be.
package final class DesktopPortalStandIn: Sendable {
    /// How it answers `OpenURI`.
    package enum Answer: String, Sendable {
        /// With a request handle, as the real portal does once it has taken the URI.
        case accept
        /// With `org.freedesktop.portal.Error.NotAllowed`, as a portal whose policy refuses.
        case refuse
    }

    /// One `OpenURI` call.
    package struct Call: Sendable, Hashable {
        package var parentWindow: String
        package var uri: String
        package var optionCount: Int

        package init(parentWindow: String, uri: String, optionCount: Int) {
            self.parentWindow = parentWindow
            self.uri = uri
            self.optionCount = optionCount
        }
    }

    static let script = """
        import sys
        import dbus, dbus.bus, dbus.exceptions, dbus.service, dbus.mainloop.glib
        from gi.repository import GLib

        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        address, answer = sys.argv[1], sys.argv[2]
        bus = dbus.bus.BusConnection(address)

        class Portal(dbus.service.Object):
            @dbus.service.method("org.freedesktop.portal.OpenURI", in_signature="ssa{sv}", out_signature="o")
            def OpenURI(self, parent_window, uri, options):
                print("OpenURI\\t%s\\t%s\\t%d" % (parent_window, uri, len(options)), flush=True)
                if answer == "refuse":
                    raise dbus.exceptions.DBusException("not allowed", name="org.freedesktop.portal.Error.NotAllowed")
                return dbus.ObjectPath("/org/freedesktop/portal/desktop/request/1_1/reachd")

        Portal(bus, "/org/freedesktop/portal/desktop")
        name = dbus.service.BusName("org.freedesktop.portal.Desktop", bus, do_not_queue=True)
        print("ready", flush=True)
        GLib.MainLoop().run()
        """

    private let process: ChildProcess

    private init(process: ChildProcess) {
        self.process = process
    }

    /// Starts it on the bus at `busAddress` and waits until it owns the name.
    package static func start(busAddress: String, answer: Answer = .accept) async throws -> DesktopPortalStandIn {
        let process = try ChildProcess(
            "desktop portal stand-in",
            executable: PrivateSystemBus.python,
            arguments: ["-c", script, busAddress, answer.rawValue]
        )
        do {
            try await process.waitForLine { $0 == "ready" }
        } catch {
            process.signal(SIGKILL)
            await process.waitForExit(timeout: .zero)
            throw error
        }
        return DesktopPortalStandIn(process: process)
    }

    /// Every `OpenURI` call so far, in order.
    package var calls: [Call] {
        process.output.compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 4, fields[0] == "OpenURI", let count = Int(fields[3]) else { return nil }
            return Call(parentWindow: String(fields[1]), uri: String(fields[2]), optionCount: count)
        }
    }

    /// Stops it (SIGKILL: children of the test runner inherit a signal mask with SIGTERM blocked);
    /// the name has no owner afterwards.
    package func stop() async {
        process.closeInput()
        process.signal(SIGKILL)
        await process.waitForExit()
    }
}
