import Logging
import ReachBus
import ReachPOSIX

/// Opens a page in the person's browser the way a desktop program should: through the desktop
/// portal (`org.freedesktop.portal.OpenURI` on the session bus) when it is there, which starts the
/// browser the person chose, outside this program's sandbox and service; else with `xdg-open`.
package struct DesktopURLOpener: URLOpener {
    /// What ``open(_:)`` returns after the desktop portal took the page.
    package static let viaDesktopPortal = "the desktop portal"
    /// What ``open(_:)`` returns after `xdg-open` exited with 0.
    package static let viaXDGOpen = "xdg-open"

    static let portalName = "org.freedesktop.portal.Desktop"
    static let openURIMethod = MethodCall(
        destination: portalName,
        path: "/org/freedesktop/portal/desktop",
        interface: "org.freedesktop.portal.OpenURI",
        member: "OpenURI"
    )
    static let nameHasOwnerMethod = MethodCall(
        destination: "org.freedesktop.DBus",
        path: "/org/freedesktop/DBus",
        interface: "org.freedesktop.DBus",
        member: "NameHasOwner"
    )
    static let callTimeout: Duration = .seconds(5)

    private let logger: Logger
    private let bus: BusConnection.Bus
    private let searchPath: String?

    /// - Parameters:
    ///   - busAddress: A D-Bus address; nil for the user's session bus.
    ///   - searchPath: The `PATH` to find `xdg-open` in; nil for this process's.
    package init(logger: Logger, busAddress: String? = nil, searchPath: String? = nil) {
        self.logger = logger
        bus = busAddress.map(BusConnection.Bus.address) ?? .session
        self.searchPath = searchPath
    }

    /// Opens `url`: through the desktop portal when `org.freedesktop.portal.Desktop` has an owner
    /// on the bus, else (or when the portal refuses) with `xdg-open`.
    package func open(_ url: String) async throws(URLOpenFailure) -> String {
        switch await askPortal(url) {
        case .opened:
            return Self.viaDesktopPortal
        case .absent:
            break
        case .failed(let reason):
            logger.notice("the desktop portal did not open the page (\(reason)); trying xdg-open")
        }
        try await runXDGOpen(url)
        return Self.viaXDGOpen
    }

    private enum PortalAnswer: Sendable {
        case opened, absent
        case failed(String)
    }

    /// Asks the portal on a thread of its own: sd-bus calls block.
    private func askPortal(_ url: String) async -> PortalAnswer {
        let bus = self.bus
        return await withCheckedContinuation { continuation in
            do throws(SystemCallError) {
                try DedicatedThread.start(named: "reachctl-open") {
                    continuation.resume(returning: Self.callPortal(url, on: bus))
                }
            } catch {
                continuation.resume(returning: .failed(error.description))
            }
        }
    }

    /// `OpenURI(parent_window "", uri, options {})` on a connection of its own, made and closed here.
    private static func callPortal(_ url: String, on which: BusConnection.Bus) -> PortalAnswer {
        do throws(BusError) {
            let bus = try BusConnection(which)
            let owner = try bus.call(nameHasOwnerMethod, timeout: callTimeout) { writer throws(BusError) in
                try writer.append(portalName)
            }
            guard try owner.message.readBool() else { return .absent }
            _ = try bus.call(openURIMethod, timeout: callTimeout) { writer throws(BusError) in
                try writer.append("")
                try writer.append(url)
                try writer.container("a", "{sv}") {}
            }
            return .opened
        } catch {
            return .failed(error.description)
        }
    }

    /// `xdg-open URL`, in a process group of its own (the browser it may start is not this
    /// program's to signal), without its output; waits for it to exit.
    private func runXDGOpen(_ url: String) async throws(URLOpenFailure) {
        let status: SpawnedProcess.Termination
        do {
            status = try await SpawnedProgram.run("xdg-open", arguments: [url], searchPath: searchPath)
        } catch {
            throw URLOpenFailure(description: "cannot run xdg-open: \(error.reason)")
        }
        switch status {
        case .exited(0): return
        case .exited(let code): throw URLOpenFailure(description: "xdg-open exited with status \(code)")
        case .signaled(let signal): throw URLOpenFailure(description: "xdg-open was killed by signal \(signal)")
        }
    }
}
