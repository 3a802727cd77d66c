import CSystemd
import Glibc
import ReachPOSIX

/// Names a D-Bus signal to subscribe to. The sender may be a well-known name: the bus then
/// delivers only what its current owner sends.
package struct SignalName: Sendable, Hashable {
    package var sender: String
    package var path: String
    package var interface: String
    package var member: String
    /// When set, only signals whose first argument is this string (such as the name a
    /// `NameOwnerChanged` is about) are delivered: the bus filters, so others never wake us.
    package var argument0: String?

    package init(sender: String, path: String, interface: String, member: String, argument0: String? = nil) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.argument0 = argument0
    }

    /// The match rule the bus filters with.
    package var matchRule: String {
        var rule = "type='signal',sender='\(Self.quoted(sender))',path='\(Self.quoted(path))'"
        rule += ",interface='\(Self.quoted(interface))',member='\(Self.quoted(member))'"
        if let argument0 { rule += ",arg0='\(Self.quoted(argument0))'" }
        return rule
    }

    /// A value for inside single quotes: a quote closes the quoting, is escaped, and reopens it.
    private static func quoted(_ value: String) -> String {
        value.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''")
    }
}

/// A tiny sd-bus client connection: signal subscriptions and blocking method calls.
///
/// sd-bus handles are not thread-safe: the thread that opens the connection is the only one that
/// may use it, from opening to the end (`deinit` closes it). Not `Sendable` on purpose. Nothing
/// here blocks except ``wait(orUntil:)`` and ``call(_:timeout:)``; the AddMatch calls go out
/// asynchronously.
package final class BusConnection {
    /// Which bus to connect to.
    package enum Bus: Sendable, Hashable {
        /// The system bus (`sd_bus_open_system`, which honours `DBUS_SYSTEM_BUS_ADDRESS`).
        case system
        /// The user's session bus (`sd_bus_open_user`: `DBUS_SESSION_BUS_ADDRESS`, else
        /// `$XDG_RUNTIME_DIR/bus`).
        case session
        /// The bus at a D-Bus address such as `unix:path=/tmp/bus`.
        case address(String)
    }

    /// What ``wait(orUntil:)`` woke up for.
    package enum Wakeup {
        /// The bus has something to do: call ``process()``.
        case bus
        /// The doorbell rang: stop (or look at what was queued).
        case doorbell
    }

    private let bus: OpaquePointer
    private var subscriptions: [SignalSubscription] = []

    /// Connects as a bus client.
    ///
    /// The socket connects here, so a missing or refusing bus throws now (for the session bus,
    /// sd-bus may defer that to the first ``process()``); authentication and `Hello` complete
    /// later, in ``process()``, which throws if they fail.
    package init(_ which: Bus) throws(BusError) {
        var handle: OpaquePointer?
        switch which {
        case .system:
            try checkBus("sd_bus_open_system", sd_bus_open_system(&handle))
            guard let handle else { throw BusError("sd_bus_open_system", code: ENOMEM) }
            bus = handle
        case .session:
            try checkBus("sd_bus_open_user", sd_bus_open_user(&handle))
            guard let handle else { throw BusError("sd_bus_open_user", code: ENOMEM) }
            bus = handle
        case .address(let address):
            try checkBus("sd_bus_new", sd_bus_new(&handle))
            guard let handle else { throw BusError("sd_bus_new", code: ENOMEM) }
            var started = false
            defer { if !started { sd_bus_unref(handle) } }
            try checkBus("sd_bus_set_address", sd_bus_set_address(handle, address))
            try checkBus("sd_bus_set_bus_client", sd_bus_set_bus_client(handle, 1))
            try checkBus("sd_bus_start", sd_bus_start(handle))
            started = true
            bus = handle
        }
    }

    deinit {
        // Slots first (no callback can follow), then the connection, without flushing: a dead or
        // stuck peer must not hold up shutdown.
        for subscription in subscriptions { subscription.cancel() }
        sd_bus_close_unref(bus)
    }

    /// Subscribes to `signal` (`sd_bus_add_match_async` with its match rule).
    ///
    /// - Parameters:
    ///   - installed: Called from ``process()`` once the bus has answered the AddMatch call: with
    ///     nil when signals will now arrive, or with the error the bus refused it with. Not called
    ///     when the answer is lost because the connection closed: ``process()`` reports that.
    ///   - received: Called from ``process()`` with each matching signal.
    package func subscribe(
        to signal: SignalName,
        installed: @escaping (BusError?) -> Void,
        received: @escaping (BusMessage) -> Void
    ) throws(BusError) {
        let subscription = SignalSubscription(bus: bus, installed: installed, received: received)
        // Unretained: `subscriptions` keeps it alive until after its slot is gone.
        let userdata = Unmanaged.passUnretained(subscription).toOpaque()
        var slot: OpaquePointer?
        try checkBus(
            "sd_bus_add_match_async",
            sd_bus_add_match_async(
                bus,
                &slot,
                signal.matchRule,
                { message, userdata, _ in
                    guard let message, let userdata else { return 0 }
                    Unmanaged<SignalSubscription>.fromOpaque(userdata).takeUnretainedValue().received(
                        BusMessage(pointer: message)
                    )
                    return 0
                },
                { reply, userdata, _ in
                    guard let reply, let userdata else { return 0 }
                    Unmanaged<SignalSubscription>.fromOpaque(userdata).takeUnretainedValue().answered(reply)
                    return 0
                },
                userdata
            )
        )
        subscription.slot = slot
        subscriptions.append(subscription)
    }

    /// Calls a method and blocks for its reply, at most `timeout`. Signals that arrive meanwhile
    /// wait for the next ``process()``.
    ///
    /// Throws when the call cannot be sent, times out (`ETIMEDOUT`), or is answered with a D-Bus
    /// error (its name and message in ``BusError/busError``).
    package func call(
        _ method: MethodCall,
        timeout: Duration,
        arguments: (BusMessageWriter) throws(BusError) -> Void
    ) throws(BusError) -> BusReply {
        var message: OpaquePointer?
        try checkBus(
            "sd_bus_message_new_method_call",
            sd_bus_message_new_method_call(
                bus,
                &message,
                method.destination,
                method.path,
                method.interface,
                method.member
            )
        )
        guard let message else { throw BusError("sd_bus_message_new_method_call", code: ENOMEM) }
        defer { sd_bus_message_unref(message) }
        try arguments(BusMessageWriter(pointer: message))
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        let microseconds = UInt64(
            max(1, timeout.components.seconds * 1_000_000 + timeout.components.attoseconds / 1_000_000_000_000)
        )
        let result = sd_bus_call(bus, message, microseconds, &error, &reply)
        guard result >= 0, let reply else {
            throw BusError(
                "\(method.interface).\(method.member)",
                code: result < 0 ? result : EIO,
                busError: BusError.text(of: error)
            )
        }
        return BusReply(pointer: reply)
    }

    /// Does one round of pending work: connecting, authenticating, reading, dispatching callbacks.
    /// Returns true when it did something (call again before waiting), false when idle.
    ///
    /// Throws when the connection is gone (`ENOTCONN` once the bus hung up, after the callbacks
    /// for the closing connection ran) or unusable.
    package func process() throws(BusError) -> Bool {
        try checkBus("sd_bus_process", sd_bus_process(bus, nil)) > 0
    }

    /// Blocks until the bus needs ``process()`` (input, output possible, or an sd-bus timeout
    /// due) or `doorbell` rings.
    package func wait(orUntil doorbell: ShutdownDoorbell) throws(BusError) -> Wakeup {
        try wait(orUntilReadable: doorbell.descriptor)
    }

    /// Blocks until the bus needs ``process()`` or `descriptor` (a doorbell's eventfd) is readable.
    package func wait(orUntilReadable doorbell: Int32) throws(BusError) -> Wakeup {
        let descriptor = try checkBus("sd_bus_get_fd", sd_bus_get_fd(bus))
        let events = try checkBus("sd_bus_get_events", sd_bus_get_events(bus))
        var deadline: UInt64 = 0
        try checkBus("sd_bus_get_timeout", sd_bus_get_timeout(bus, &deadline))
        var descriptors = [
            pollfd(fd: descriptor, events: Int16(truncatingIfNeeded: events), revents: 0),
            pollfd(fd: doorbell, events: Int16(POLLIN), revents: 0),
        ]
        let ready = poll(&descriptors, nfds_t(descriptors.count), Self.pollTimeout(until: deadline))
        if ready < 0 {
            // A signal: let the caller process and come back.
            guard errno == EINTR else { throw BusError("poll", code: errno) }
            return .bus
        }
        return descriptors[1].revents != 0 ? .doorbell : .bus
    }

    /// Milliseconds from now to `deadline` (µs of CLOCK_MONOTONIC, as sd-bus gives it), rounded up;
    /// -1 (forever) for `UInt64.max`.
    private static func pollTimeout(until deadline: UInt64) -> Int32 {
        guard deadline != .max else { return -1 }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
        guard deadline > nowMicroseconds else { return 0 }
        return Int32(clamping: (deadline - nowMicroseconds + 999) / 1_000)
    }
}

/// Names a method to call: the destination (a well-known or unique bus name), object and member.
package struct MethodCall: Sendable, Hashable {
    package var destination: String
    package var path: String
    package var interface: String
    package var member: String

    package init(destination: String, path: String, interface: String, member: String) {
        self.destination = destination
        self.path = path
        self.interface = interface
        self.member = member
    }
}

/// One signal subscription: its slot and callbacks, reached from C through the slot's userdata.
private final class SignalSubscription {
    private let bus: OpaquePointer
    private let installed: (BusError?) -> Void
    package let received: (BusMessage) -> Void
    package var slot: OpaquePointer?

    package init(bus: OpaquePointer, installed: @escaping (BusError?) -> Void, received: @escaping (BusMessage) -> Void)
    {
        self.bus = bus
        self.installed = installed
        self.received = received
    }

    /// The bus answered AddMatch.
    package func answered(_ reply: OpaquePointer) {
        guard sd_bus_message_is_method_error(reply, nil) > 0 else {
            installed(nil)
            return
        }
        // sd-bus also answers with an error when the connection closes before the bus did;
        // that is a lost connection, which `process()` reports.
        guard sd_bus_is_open(bus) > 0 else { return }
        let code = sd_bus_message_get_errno(reply)
        installed(
            BusError(
                "AddMatch",
                code: code > 0 ? code : EIO,
                busError: sd_bus_message_get_error(reply).flatMap { BusError.text(of: $0.pointee) }
            )
        )
    }

    package func cancel() {
        if let slot { sd_bus_slot_unref(slot) }
        slot = nil
    }
}
