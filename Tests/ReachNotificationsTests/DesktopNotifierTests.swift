import Foundation
import ReachNotifications
import ReachTestRigs
import ReachTesting
import Synchronization
import Testing

/// The notification client against a real session bus with dunst on it.
@Suite(.serialized, .enabled(if: PrivateDesktop.isAvailable, Comment(rawValue: PrivateDesktop.unavailableReason)))
struct DesktopNotifierTests {
    /// Runs `body` with a desktop and a notifier connected to its bus (at the address `address`
    /// picks) that has reported ``DesktopNotifier/Event/ready``; stops both whatever happens.
    private func withNotifier(
        address: (PrivateDesktop) -> String = { $0.busAddress },
        _ body: (PrivateDesktop, RunningNotifier) async throws -> Void
    ) async throws {
        let desktop = try await PrivateDesktop.start()
        let running = RunningNotifier(busAddress: address(desktop))
        do {
            try await running.waitFor(.ready)
            try await body(desktop, running)
        } catch {
            await running.cancel()
            await desktop.stop()
            throw error
        }
        await running.cancel()
        await desktop.stop()
    }

    static let waiting = DesktopNotification(
        icon: "network-offline",
        summary: "Waiting",
        body: "for the server",
        actions: [.init(key: "check-now", label: "Check now")],
        category: "network.disconnected",
        resident: true,
        expiry: .never
    )

    @Test func postsReplacesInPlaceAndCloses() async throws {
        try await withNotifier { desktop, running in
            let id = try await running.notifier.notify(Self.waiting, replacing: 0)
            #expect(id != 0)
            var update = Self.waiting
            update.body = "still waiting"
            let again = try await running.notifier.notify(update, replacing: id)
            #expect(again == id, "replaced in place")
            try await waitUntil("dunst shows one") { (try? await desktop.displayedCount()) == 1 }
            let calls = desktop.notifyCalls
            #expect(calls.map(\.replacesID) == [0, id])
            #expect(calls.last?.body == "still waiting")
            #expect(calls.last?.expireTimeout == 0)
            #expect(calls.last?.hints["urgency"] == "byte 1")

            try await running.notifier.close(id)
            try await running.waitFor(.closed(id: id, reason: .closedByCall))
            #expect(try await desktop.displayedCount() == 0)
            #expect(running.logs.warnings.isEmpty, "\(running.logs.warnings)")
        }
    }

    @Test func reportsActionsAndTheServerGoingAndComing() async throws {
        try await withNotifier { desktop, running in
            let id = try await running.notifier.notify(Self.waiting, replacing: 0)
            try await waitUntil("dunst shows it") { (try? await desktop.displayedCount()) == 1 }

            try await desktop.dunstctl(["action", "0"])
            try await running.waitFor(.actionInvoked(id: id, action: "check-now"))

            await desktop.killNotificationServer()
            try await running.waitFor(.serverStopped)
            // No server: the call fails with the bus's words, the notifier carries on.
            await #expect(throws: DesktopNotifier.Failure.self) {
                try await running.notifier.notify(Self.waiting, replacing: 0)
            }
            try await desktop.startNotificationServer()
            try await running.waitFor(.serverStarted)
            #expect(try await running.notifier.notify(Self.waiting, replacing: 0) != 0)
        }
    }

    @Test func aLostBusIsWarnedOnceAndReconnected() async throws {
        try await withNotifier(address: { $0.socketAddress }) { desktop, running in
            try await desktop.restartBus(after: .seconds(2))
            try await running.waitFor(.busLost)
            try await running.waitFor(.ready, count: 2)
            let warnings = running.logs.warnings.map(\.message)
            #expect(warnings.count == 1, "\(warnings)")
            #expect(warnings.first?.hasPrefix("lost the session bus") == true, "\(warnings)")
            await #expect(throws: DesktopNotifier.Failure.self, "no server on the new bus") {
                try await running.notifier.notify(Self.waiting, replacing: 0)
            }
        }
    }

    @Test func cancellingStopsItPromptlyAndLaterCallsFail() async throws {
        try await withNotifier { _, running in
            let started = ContinuousClock.now
            await running.cancel()
            #expect(ContinuousClock.now - started < .seconds(2))
            await #expect(throws: DesktopNotifier.Failure.self) {
                try await running.notifier.notify(Self.waiting, replacing: 0)
            }
        }
    }
}
