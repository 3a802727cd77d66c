import Logging
import ReachBus
import ReachPOSIX
import Synchronization

/// One connection of a ``DesktopNotifier``: the queue of calls other threads hand to its bus
/// thread, and that thread's body.
final class BusSession: Sendable {
    enum Call: Sendable {
        case notify(DesktopNotification, replacing: UInt32)
        case close(UInt32)
    }

    struct Request: Sendable {
        var call: Call
        var continuation: CheckedContinuation<Result<UInt32, DesktopNotifier.Failure>, Never>
    }

    private struct Mailbox {
        var requests: [Request] = []
        var stopping = false
        /// Set when the thread has finished: nothing queued from then on would be taken.
        var closed = false
    }

    private let doorbell: ShutdownDoorbell
    private let mailbox = Mutex(Mailbox())

    static let actionInvoked = SignalName(
        sender: DesktopNotifier.server,
        path: DesktopNotifier.path,
        interface: DesktopNotifier.server,
        member: "ActionInvoked"
    )
    static let notificationClosed = SignalName(
        sender: DesktopNotifier.server,
        path: DesktopNotifier.path,
        interface: DesktopNotifier.server,
        member: "NotificationClosed"
    )
    static let ownerChanged = SignalName(
        sender: "org.freedesktop.DBus",
        path: "/org/freedesktop/DBus",
        interface: "org.freedesktop.DBus",
        member: "NameOwnerChanged",
        argument0: DesktopNotifier.server
    )

    init() throws(SystemCallError) {
        doorbell = try ShutdownDoorbell()
    }

    /// Queues a request for the bus thread; false once the session is over.
    func enqueue(_ request: Request) -> Bool {
        let accepted = mailbox.withLock { mailbox in
            guard !mailbox.closed else { return false }
            mailbox.requests.append(request)
            return true
        }
        if accepted { doorbell.ring() }
        return accepted
    }

    /// Asks the bus thread to finish.
    func stop() {
        mailbox.withLock { $0.stopping = true }
        doorbell.ring()
    }

    /// Fails whatever is still queued, and every later request, once the thread is gone.
    func failPending() {
        let orphans = mailbox.withLock { mailbox in
            mailbox.closed = true
            defer { mailbox.requests = [] }
            return mailbox.requests
        }
        for request in orphans {
            request.continuation.resume(
                returning: .failure(DesktopNotifier.Failure(description: "the session bus connection closed"))
            )
        }
    }

    /// What the signal callbacks learned, read by the loop between rounds. Confined to the bus thread.
    private final class Progress {
        var installed = 0
        var refusal: BusError?
    }

    /// The body of the bus thread: connects, subscribes to the server's signals and to its name's
    /// owner, then serves queued calls and dispatches signals until stopped (returns) or the bus
    /// fails (throws). Every sd-bus handle is created, used and released on this thread.
    func serve(
        bus which: BusConnection.Bus,
        logger: Logger,
        onEvent: @escaping (DesktopNotifier.Event) -> Void
    ) throws(BusError) {
        let bus = try BusConnection(which)
        let progress = Progress()
        let installed: (BusError?) -> Void = { error in
            if let error {
                progress.refusal = error
                return
            }
            progress.installed += 1
            if progress.installed == 3 { onEvent(.ready) }
        }
        try bus.subscribe(to: Self.actionInvoked, installed: installed) { message in
            guard let id = try? message.readUInt32(), let action = try? message.readString() else {
                logger.notice("ignoring an ActionInvoked signal without (u id, s action)")
                return
            }
            onEvent(.actionInvoked(id: id, action: action))
        }
        try bus.subscribe(to: Self.notificationClosed, installed: installed) { message in
            guard let id = try? message.readUInt32(), let reason = try? message.readUInt32() else {
                logger.notice("ignoring a NotificationClosed signal without (u id, u reason)")
                return
            }
            onEvent(.closed(id: id, reason: DesktopNotifier.CloseReason(rawValue: reason) ?? .undefined))
        }
        try bus.subscribe(to: Self.ownerChanged, installed: installed) { message in
            guard (try? message.readString()) != nil, (try? message.readString()) != nil,
                let newOwner = try? message.readString()
            else { return }
            onEvent(newOwner.isEmpty ? .serverStopped : .serverStarted)
        }
        while true {
            while try bus.process() {
                if progress.refusal != nil { break }
            }
            if let refusal = progress.refusal { throw refusal }
            doorbell.drain()
            let (requests, stopping) = mailbox.withLock { mailbox in
                defer { mailbox.requests = [] }
                return (mailbox.requests, mailbox.stopping)
            }
            if stopping {
                for request in requests {
                    request.continuation.resume(returning: .failure(DesktopNotifier.Failure(description: "stopping")))
                }
                return
            }
            for request in requests {
                request.continuation.resume(returning: Self.perform(request.call, on: bus))
            }
            // Signals that came in during a call wait in sd-bus's queue: process them first.
            if !requests.isEmpty { continue }
            _ = try bus.wait(orUntilReadable: doorbell.descriptor)
        }
    }

    private static func perform(_ call: Call, on bus: BusConnection) -> Result<UInt32, DesktopNotifier.Failure> {
        do {
            switch call {
            case .notify(let notification, let id):
                let reply = try bus.call(DesktopNotifier.notifyMethod, timeout: DesktopNotifier.callTimeout) {
                    writer throws(BusError) in
                    try notification.writeNotifyArguments(replacing: id, to: writer)
                }
                return .success(try reply.message.readUInt32())
            case .close(let id):
                _ = try bus.call(DesktopNotifier.closeMethod, timeout: DesktopNotifier.callTimeout) {
                    writer throws(BusError) in
                    try writer.append(id)
                }
                return .success(id)
            }
        } catch {
            return .failure(DesktopNotifier.Failure(description: error.description))
        }
    }
}
