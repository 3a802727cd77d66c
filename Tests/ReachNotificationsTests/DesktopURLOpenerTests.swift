import Foundation
import ReachNotifications
import ReachTestRigs
import ReachTesting
import Testing

/// The real opener against a private session bus: a desktop portal served by a D-Bus service of the
/// test's own, and `xdg-open` replaced by a script on `PATH`.
@Suite(.serialized, .enabled(if: PrivateDesktop.isAvailable, Comment(rawValue: PrivateDesktop.unavailableReason)))
struct DesktopURLOpenerTests {
    static let url = "http://portal.test/login?next=%2F&venue=hotel"

    @Test func theDesktopPortalOpensThePageWhenItIsThere() async throws {
        let desktop = try await PrivateDesktop.start()
        let portal = try await DesktopPortalStandIn.start(busAddress: desktop.busAddress)
        let xdgOpen = try await XDGOpenStandIn()
        let logs = CapturedLogs()
        let route = try await DesktopURLOpener(
            logger: logs.logger,
            busAddress: desktop.busAddress,
            searchPath: xdgOpen.searchPath
        ).open(Self.url)
        #expect(route == DesktopURLOpener.viaDesktopPortal)
        // The stand-in's output is read on a thread of its own: wait for its line.
        try await waitUntil("the stand-in's line is read") { !portal.calls.isEmpty }
        #expect(portal.calls == [.init(parentWindow: "", uri: Self.url, optionCount: 0)])
        #expect(xdgOpen.opened.isEmpty)
        #expect(logs.all.isEmpty, "\(logs.all)")
        await portal.stop()
        await desktop.stop()
    }

    @Test func withoutAPortalXDGOpenOpensIt() async throws {
        let desktop = try await PrivateDesktop.start()
        let xdgOpen = try await XDGOpenStandIn()
        let logs = CapturedLogs()
        let route = try await DesktopURLOpener(
            logger: logs.logger,
            busAddress: desktop.busAddress,
            searchPath: xdgOpen.searchPath
        ).open(Self.url)
        #expect(route == DesktopURLOpener.viaXDGOpen)
        #expect(xdgOpen.opened == [Self.url])
        #expect(logs.all.isEmpty, "no portal is no news: \(logs.all)")
        await desktop.stop()
    }

    @Test func aRefusingPortalOrNoBusFallsBackToXDGOpen() async throws {
        let desktop = try await PrivateDesktop.start()
        let portal = try await DesktopPortalStandIn.start(busAddress: desktop.busAddress, answer: .refuse)
        let xdgOpen = try await XDGOpenStandIn()
        let logs = CapturedLogs()
        let opener = DesktopURLOpener(
            logger: logs.logger,
            busAddress: desktop.busAddress,
            searchPath: xdgOpen.searchPath
        )
        #expect(try await opener.open(Self.url) == DesktopURLOpener.viaXDGOpen)
        try await waitUntil("the stand-in's line is read") { !portal.calls.isEmpty }
        #expect(portal.calls.map(\.uri) == [Self.url])
        #expect(logs.contains("org.freedesktop.portal.Error.NotAllowed"), "\(logs.all)")
        await portal.stop()
        await desktop.stop()

        let busless = DesktopURLOpener(
            logger: logs.logger,
            busAddress: "unix:path=/nonexistent/bus",
            searchPath: xdgOpen.searchPath
        )
        #expect(try await busless.open(Self.url) == DesktopURLOpener.viaXDGOpen)
        #expect(xdgOpen.opened == [Self.url, Self.url])
    }

    @Test func aFailingOrMissingXDGOpenIsAnError() async throws {
        let failing = try await XDGOpenStandIn(exitStatus: 4)
        let logs = CapturedLogs()
        let dead = "unix:path=/nonexistent/bus"
        await #expect {
            try await DesktopURLOpener(logger: logs.logger, busAddress: dead, searchPath: failing.searchPath).open(
                Self.url
            )
        } throws: { error in
            "\(error)" == "xdg-open exited with status 4"
        }
        #expect(failing.opened == [Self.url])
        let empty = try TemporaryDirectory("no-xdg-open")
        await #expect(throws: URLOpenFailure.self) {
            try await DesktopURLOpener(logger: logs.logger, busAddress: dead, searchPath: empty.path).open(Self.url)
        }
    }

    @Test func xdgOpenGetsNoneOfOurDescriptors() async throws {
        // A pipe without close-on-exec, as Foundation's `Pipe` makes for every child a test starts.
        let pipe = Pipe()
        var status = stat()
        #expect(fstat(pipe.fileHandleForWriting.fileDescriptor, &status) == 0)
        let xdgOpen = try await XDGOpenStandIn()
        let opener = DesktopURLOpener(
            logger: CapturedLogs().logger,
            busAddress: "unix:path=/nonexistent/bus",
            searchPath: xdgOpen.searchPath
        )
        #expect(try await opener.open(Self.url) == DesktopURLOpener.viaXDGOpen)
        #expect(!xdgOpen.descriptors.isEmpty)
        #expect(!xdgOpen.descriptors.contains("pipe:[\(status.st_ino)]"), "\(xdgOpen.descriptors)")
        #expect(!xdgOpen.descriptors.contains { $0.hasPrefix("socket:") }, "\(xdgOpen.descriptors)")
    }
}
