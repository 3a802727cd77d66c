import Foundation
import ReachTestRigs
import ReachTesting
import Testing

/// Every GLib program, and every Flatpak app through the desktop portal, hears reachd's verdict
/// through its GIO module (`gio-module/`), meeting the fault matrix's faults for real: in the
/// matrix's network (``MatrixNetwork``: reachd in the host namespace, the fault server and the
/// portal server built as real ones are in the server namespace), a Python program using
/// `Gio.NetworkMonitor.get_default()` through GObject introspection, and the real
/// `xdg-desktop-portal` on a private session bus, both in the host namespace with the module on
/// `GIO_EXTRA_MODULES`. Each case requires the `network-changed` signal with the mapped
/// connectivity, the portal's `GetConnectivity` and `GetStatus` saying the same, and
/// `can_reach()` answered from the target's health; then the signal back to full.
@Suite(
    "FaultMatrix: GLib programs and the desktop portal hear reachd",
    .serialized,
    .enabled(if: TestNamespace.isAvailable, Comment(rawValue: TestNamespace.unavailableReason)),
    .enabled(if: GLibMonitorProgram.isAvailable, Comment(rawValue: GLibMonitorProgram.unavailableReason)),
    .enabled(if: XDGDesktopPortal.isAvailable, Comment(rawValue: XDGDesktopPortal.unavailableReason)),
    .enabled(if: PrivateDesktop.isAvailable, Comment(rawValue: PrivateDesktop.unavailableReason))
)
struct GIOModuleFaultMatrix {
    typealias Connectivity = GLibMonitorProgram.Connectivity

    @Test(.timeLimit(.minutes(5)))
    func glibProgramsAndTheDesktopPortalHearEveryFault() async throws {
        let network = try await MatrixNetwork.make()
        let scratch = try TemporaryDirectory("gio-matrix")
        var server: FaultServer?
        var portal: PortalServer?
        var reachd: ReachdProcess?
        var program: GLibMonitorProgram?
        var desktop: PrivateDesktop?
        var desktopPortal: XDGDesktopPortal?
        do {
            let faultServer = try FaultServer(
                namespace: network.server,
                certificate: try await FaultServer.makeCertificate(in: scratch.path)
            )
            server = faultServer
            let portalServer = try PortalServer(
                namespace: network.server,
                certificate: try await FaultServer.makeCertificate(in: scratch.path, name: "portal")
            )
            portal = portalServer
            try await faultServer.waitUntilReady()
            try await portalServer.waitUntilReady()
            let socket = "\(scratch.path)/reachd.sock"
            let started = try ReachdProcess(
                configuration: """
                    socket: \(socket)
                    targets:
                      - name: server
                        url: http://\(MatrixNetwork.serverName):\(FaultServer.port)/health
                    captive_portal:
                      check_url: \(PortalServer.checkURL)
                      expect_status: 204
                    """,
                in: scratch.path,
                listen: nil,
                namespace: network.host,
                log: "\(scratch.path)/reachd.log"
            )
            reachd = started
            try await waitUntil("reachd's unix socket", timeout: .seconds(20)) {
                FileManager.default.fileExists(atPath: socket)
            }
            let glib = try await GLibMonitorProgram(endpoint: socket, namespace: network.host)
            program = glib
            let (backend, initSeconds) = try await glib.start()
            #expect(backend.type == GLibMonitorProgram.moduleType, "\(glib.report)")
            #expect(initSeconds < 1, "get_default() took \(initSeconds) s")
            if backend.connectivity != Connectivity.full.rawValue {
                try await glib.waitForChange(to: .full, available: true, after: 0)
            }
            let bus = try await PrivateDesktop.start()
            desktop = bus
            let runtime = try TemporaryDirectory("gio-matrix-runtime")
            let xdp = try await XDGDesktopPortal(
                desktop: bus,
                endpoint: socket,
                namespace: network.host,
                runtimeDirectory: runtime.path
            )
            desktopPortal = xdp
            try await xdp.waitUntilItSays(connectivity: Connectivity.full.rawValue, available: true)

            var rows: [MatrixCase] = []
            let target = (host: MatrixNetwork.serverName, port: FaultServer.port)
            func fault(
                _ name: String,
                _ connectivity: Connectivity,
                available: Bool,
                apply: () async throws -> Void,
                whileApplied: () async throws -> Void = {},
                restore: () async throws -> Void
            ) async {
                var row = MatrixCase(
                    group: "glib",
                    name: name,
                    expected: "\(connectivity) (portal \(connectivity.rawValue)), available \(available)"
                )
                do {
                    let mark = glib.mark
                    let applied = ContinuousClock.now
                    try await apply()
                    try await glib.waitForChange(to: connectivity, available: available, after: mark)
                    row.detected = ContinuousClock.now - applied
                    try await xdp.waitUntilItSays(connectivity: connectivity.rawValue, available: available)
                    try await whileApplied()
                    let restoring = glib.mark
                    let restoredAt = ContinuousClock.now
                    try await restore()
                    try await glib.waitForChange(to: .full, available: true, after: restoring)
                    row.restored = ContinuousClock.now - restoredAt
                    try await xdp.waitUntilItSays(connectivity: Connectivity.full.rawValue, available: true)
                    let reached = try await glib.reach(target.host, target.port)
                    if reached.reachable != true {
                        row.failure = "restored, can_reach(\(target.host):\(target.port)) said \(reached)"
                    }
                } catch {
                    row.failure = "\(error)"
                }
                print("fault matrix: glib / \(name): \(row.failure.map { "FAIL \($0)" } ?? "ok")")
                rows.append(row)
            }

            await fault("captive portal (login page, check URL)", .portal, available: true) {
                try await portalServer.set("login")
                try await network.setPortal(true)
            } restore: {
                try await network.setPortal(false)
            }
            await fault("server refused", .limited, available: true) {
                try await faultServer.set("close")
            } whileApplied: {
                // The target's own health answers: refused, as GLib's error.
                let reached = try await glib.reach(target.host, target.port)
                #expect(reached.reachable == false)
                #expect(reached.error?.message == "reachd: target server fails: connection_refused", "\(reached)")
                // Any other host on the link: the kernel's routes, as GLib's netlink backend answers.
                let other = try await glib.reach(MatrixNetwork.grpcAddress, 22)
                #expect(other.reachable == true, "\(other)")
            } restore: {
                try await faultServer.set("open")
            }
            await fault("link down", .local, available: false) {
                try await network.host.ip("link", "set", "m0", "down")
            } whileApplied: {
                let other = try await glib.reach(MatrixNetwork.grpcAddress, 22)
                #expect(other.reachable == false, "no route: \(other)")
            } restore: {
                try await network.restoreLink()
            }
            print("\n" + MatrixCase.table(rows))
            print(
                "fault matrix (GLib and the desktop portal): \(rows.filter(\.passed).count)/\(rows.count) cases heard"
            )
            for row in rows where !row.passed {
                Issue.record(
                    "\(row.name): \(row.failure ?? "")\n\(glib.report)\nreachd's log:\n\(started.log.suffix(3000))"
                )
            }
        } catch {
            Issue.record(
                "the GLib matrix could not run: \(error)\n\(program?.report ?? "")\n\(reachd?.log.suffix(3000) ?? "")"
            )
        }
        await desktopPortal?.stop()
        await desktop?.stop()
        await program?.stop()
        await reachd?.kill()
        await portal?.stop()
        await server?.stop()
        await network.tearDown()
    }
}
