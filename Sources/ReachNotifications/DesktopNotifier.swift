import Glibc
import Logging
import ReachBus
import ReachPOSIX
import Synchronization

/// A client of the desktop's notification server (`org.freedesktop.Notifications` on the user's
/// session bus): posts and closes notifications, and reports the server's signals.
///
/// A dedicated thread owns the sd-bus connection (sd-bus handles are not thread-safe); ``notify(_:replacing:)``
/// and ``close(_:)`` hand their call to it and wait. ``run(onEvent:)`` keeps a connection up:
/// when there is no session bus, or it goes away, it logs one warning and retries with capped
/// exponential backoff, quietly, until it is back.
///
/// ```swift
/// let notifier = DesktopNotifier(logger: logger)
/// Task { await notifier.run { event in ... } }
/// let id = try await notifier.notify(notification, replacing: 0)
/// ```
package final class DesktopNotifier: Sendable {
    /// What the bus and the notification server report.
    package enum Event: Sendable, Hashable {
        /// Connected and listening: whatever should be on screen can be posted (again).
        case ready
        /// `org.freedesktop.Notifications` has a new owner: a server (re)started, and what the
        /// previous one showed is gone.
        case serverStarted
        /// The server left the bus, taking its notifications with it.
        case serverStopped
        /// The person invoked `action` on notification `id`.
        case actionInvoked(id: UInt32, action: String)
        /// Notification `id` went away.
        case closed(id: UInt32, reason: CloseReason)
        /// The connection to the session bus was lost; ``ready`` follows when it is back.
        case busLost
    }

    /// Why a notification was closed (`NotificationClosed`'s second argument), so a client can tell
    /// the person's "go away" from its own timeout.
    package enum CloseReason: UInt32, Sendable, Hashable {
        /// Its expire timeout passed.
        case expired = 1
        /// The person dismissed it.
        case dismissed = 2
        /// A `CloseNotification` call took it away.
        case closedByCall = 3
        /// The server did not say (or said something the specification does not define).
        case undefined = 4
    }

    /// A call that did not go through (no bus, no server, a timeout, a D-Bus error), in words for
    /// the log: the caller's remedy is the same in every case, to try again later.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        package let description: String
    }

    static let server = "org.freedesktop.Notifications"
    static let path = "/org/freedesktop/Notifications"
    static let notifyMethod = MethodCall(destination: server, path: path, interface: server, member: "Notify")
    static let closeMethod = MethodCall(destination: server, path: path, interface: server, member: "CloseNotification")
    static let callTimeout: Duration = .seconds(5)
    static let firstRetry: Duration = .milliseconds(250)
    static let longestRetry: Duration = .seconds(30)

    private let logger: Logger
    private let bus: BusConnection.Bus
    private let current = Mutex<BusSession?>(nil)

    /// - Parameters:
    ///   - busAddress: A D-Bus address; nil for the user's session bus (`DBUS_SESSION_BUS_ADDRESS`,
    ///     else `$XDG_RUNTIME_DIR/bus`).
    package init(logger: Logger, busAddress: String? = nil) {
        self.logger = logger
        bus = busAddress.map(BusConnection.Bus.address) ?? .session
    }

    /// Posts `notification` in place of notification `id` (0 for a new one) and returns the id the
    /// server gave it: keep it, since servers may give a new one. Throws when not connected, when
    /// no notification server answers, or when it refuses.
    package func notify(_ notification: DesktopNotification, replacing id: UInt32) async throws(Failure) -> UInt32 {
        try await submit(.notify(notification, replacing: id))
    }

    /// Takes notification `id` away (`CloseNotification`).
    package func close(_ id: UInt32) async throws(Failure) {
        _ = try await submit(.close(id))
    }

    private func submit(_ call: BusSession.Call) async throws(Failure) -> UInt32 {
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<UInt32, Failure>, Never>) in
            let request = BusSession.Request(call: call, continuation: continuation)
            let accepted = current.withLock { $0?.enqueue(request) ?? false }
            if !accepted {
                continuation.resume(returning: .failure(Failure(description: "not connected to the session bus")))
            }
        }
        return try result.get()
    }

    /// Keeps a connection to the bus until the calling task is cancelled, calling `onEvent` (on
    /// the bus thread) with what happens there.
    package func run(onEvent: @escaping @Sendable (Event) -> Void) async {
        var retry = Self.firstRetry
        var warned = false
        while !Task.isCancelled {
            let outcome = await serveOneConnection(onEvent: onEvent)
            if Task.isCancelled { break }
            if outcome.becameReady {
                retry = Self.firstRetry
                warned = false
                onEvent(.busLost)
            }
            let reason = outcome.error.map { "\($0.reason)" } ?? "closed"
            if !warned {
                var metadata: Logger.Metadata = ["bus": "\(busDescription)"]
                if let error = outcome.error { metadata["error"] = "\(error)" }
                logger.warning(
                    "\(outcome.becameReady ? "lost the session bus" : "cannot use the session bus"): \(reason); desktop notifications wait until it is back",
                    metadata: metadata
                )
                warned = true
            } else {
                logger.debug("still no session bus: \(reason)")
            }
            // Jitter: many agents of one machine (one per session) do not retry in step.
            let wait = retry * Double.random(in: 0.5...1.0)
            try? await Task.sleep(for: wait)
            retry = min(retry * 2, Self.longestRetry)
        }
    }

    /// The bus's address, for the log: given, or as sd-bus finds the session bus.
    private var busDescription: String {
        switch bus {
        case .address(let address): return address
        case .system: return "system"
        case .session:
            if let address = getenv("DBUS_SESSION_BUS_ADDRESS") { return String(cString: address) }
            if let directory = getenv("XDG_RUNTIME_DIR") { return "unix:path=\(String(cString: directory))/bus" }
            return "session (neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set)"
        }
    }

    private struct Outcome: Sendable {
        var becameReady = false
        var error: BusError?
    }

    /// Connects once, on a thread of its own, and serves until the bus fails or the task is cancelled.
    private func serveOneConnection(onEvent: @escaping @Sendable (Event) -> Void) async -> Outcome {
        let session: BusSession
        do {
            session = try BusSession()
        } catch {
            return Outcome(error: BusError(error))
        }
        current.withLock { $0 = session }
        let bus = self.bus
        let logger = self.logger
        let outcome: Outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                do throws(SystemCallError) {
                    try DedicatedThread.start(named: "reachctl-sd-bus") {
                        var outcome = Outcome()
                        do throws(BusError) {
                            try session.serve(bus: bus, logger: logger) { event in
                                if event == .ready { outcome.becameReady = true }
                                onEvent(event)
                            }
                        } catch {
                            outcome.error = error
                        }
                        continuation.resume(returning: outcome)
                    }
                } catch {
                    continuation.resume(returning: Outcome(error: BusError(error)))
                }
            }
        } onCancel: {
            session.stop()
        }
        current.withLock { if $0 === session { $0 = nil } }
        session.failPending()
        return outcome
    }
}
