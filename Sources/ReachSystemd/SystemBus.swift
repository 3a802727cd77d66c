import DedicatedThread
import CSystemd
import Glibc

/// Names a D-Bus signal to subscribe to. The sender may be a well-known name: the bus then
/// delivers only what its current owner sends.
struct SignalName: Sendable, Hashable {
    var sender: String
    var path: String
    var interface: String
    var member: String
}

/// A received message, valid only for the duration of the callback it is handed to.
struct BusMessage {
    fileprivate let pointer: OpaquePointer

    /// Reads the next argument as a D-Bus boolean (`b`).
    func readBool() throws(BusError) -> Bool {
        // sd-bus stores `b` as a C int.
        var value: Int32 = 0
        let result = try checkBus("sd_bus_message_read_basic(b)", sd_bus_message_read_basic(pointer, CChar(UInt8(ascii: "b")), &value))
        guard result > 0 else { throw BusError("sd_bus_message_read_basic(b)", code: ENXIO) }
        return value != 0
    }
}

/// A tiny sd-bus connection for a client that only listens to signals.
///
/// sd-bus handles are not thread-safe: the thread that opens the connection is the only one that
/// may use it, from opening to the end (`deinit` closes it). Not `Sendable` on purpose. Nothing
/// here blocks except ``wait(orUntil:)``; the AddMatch call goes out asynchronously.
final class SystemBus {
    /// What ``wait(orUntil:)`` woke up for.
    enum Wakeup {
        /// The bus has something to do: call ``process()``.
        case bus
        /// The doorbell rang: stop.
        case doorbell
    }

    private let bus: OpaquePointer
    private var subscriptions: [SignalSubscription] = []

    /// Connects as a bus client: to the system bus when `address` is nil (`sd_bus_open_system`,
    /// which honours `DBUS_SYSTEM_BUS_ADDRESS`), else to the bus at `address`.
    ///
    /// The socket connects here, so a missing or refusing bus throws now; authentication and
    /// `Hello` complete later, in ``process()``, which throws if they fail.
    init(address: String?) throws(BusError) {
        var handle: OpaquePointer?
        guard let address else {
            try checkBus("sd_bus_open_system", sd_bus_open_system(&handle))
            guard let handle else { throw BusError("sd_bus_open_system", code: ENOMEM) }
            bus = handle
            return
        }
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

    deinit {
        // Slots first (no callback can follow), then the connection, without flushing: a dead or
        // stuck peer must not hold up shutdown.
        for subscription in subscriptions { subscription.cancel() }
        sd_bus_close_unref(bus)
    }

    /// Subscribes to `signal` (`sd_bus_match_signal_async`).
    ///
    /// - Parameters:
    ///   - installed: Called from ``process()`` once the bus has answered the AddMatch call: with
    ///     nil when signals will now arrive, or with the error the bus refused it with. Not called
    ///     when the answer is lost because the connection closed: ``process()`` reports that.
    ///   - received: Called from ``process()`` with each matching signal.
    func subscribe(
        to signal: SignalName,
        installed: @escaping (BusError?) -> Void,
        received: @escaping (BusMessage) -> Void
    ) throws(BusError) {
        let subscription = SignalSubscription(bus: bus, installed: installed, received: received)
        // Unretained: `subscriptions` keeps it alive until after its slot is gone.
        let userdata = Unmanaged.passUnretained(subscription).toOpaque()
        var slot: OpaquePointer?
        try checkBus(
            "sd_bus_match_signal_async",
            sd_bus_match_signal_async(
                bus, &slot, signal.sender, signal.path, signal.interface, signal.member,
                { message, userdata, _ in
                    guard let message, let userdata else { return 0 }
                    Unmanaged<SignalSubscription>.fromOpaque(userdata).takeUnretainedValue().received(BusMessage(pointer: message))
                    return 0
                },
                { reply, userdata, _ in
                    guard let reply, let userdata else { return 0 }
                    Unmanaged<SignalSubscription>.fromOpaque(userdata).takeUnretainedValue().answered(reply)
                    return 0
                },
                userdata))
        subscription.slot = slot
        subscriptions.append(subscription)
    }

    /// Does one round of pending work: connecting, authenticating, reading, dispatching callbacks.
    /// Returns true when it did something (call again before waiting), false when idle.
    ///
    /// Throws when the connection is gone (`ENOTCONN` once the bus hung up, after the callbacks
    /// for the closing connection ran) or unusable.
    func process() throws(BusError) -> Bool {
        try checkBus("sd_bus_process", sd_bus_process(bus, nil)) > 0
    }

    /// Blocks until the bus needs ``process()`` (input, output possible, or an sd-bus timeout
    /// due) or `doorbell` rings.
    func wait(orUntil doorbell: ShutdownDoorbell) throws(BusError) -> Wakeup {
        let descriptor = try checkBus("sd_bus_get_fd", sd_bus_get_fd(bus))
        let events = try checkBus("sd_bus_get_events", sd_bus_get_events(bus))
        var deadline: UInt64 = 0
        try checkBus("sd_bus_get_timeout", sd_bus_get_timeout(bus, &deadline))
        var descriptors = [
            pollfd(fd: descriptor, events: Int16(truncatingIfNeeded: events), revents: 0),
            pollfd(fd: doorbell.descriptor, events: Int16(POLLIN), revents: 0),
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

/// One signal subscription: its slot and callbacks, reached from C through the slot's userdata.
private final class SignalSubscription {
    private let bus: OpaquePointer
    private let installed: (BusError?) -> Void
    let received: (BusMessage) -> Void
    var slot: OpaquePointer?

    init(bus: OpaquePointer, installed: @escaping (BusError?) -> Void, received: @escaping (BusMessage) -> Void) {
        self.bus = bus
        self.installed = installed
        self.received = received
    }

    /// The bus answered AddMatch.
    func answered(_ reply: OpaquePointer) {
        guard sd_bus_message_is_method_error(reply, nil) > 0 else {
            installed(nil)
            return
        }
        // sd-bus also answers with an error when the connection closes before the bus did;
        // that is a lost connection, which `process()` reports.
        guard sd_bus_is_open(bus) > 0 else { return }
        var busError: String?
        if let error = sd_bus_message_get_error(reply), let name = error.pointee.name {
            busError = String(cString: name)
            if let message = error.pointee.message { busError! += ": " + String(cString: message) }
        }
        let code = sd_bus_message_get_errno(reply)
        installed(BusError("AddMatch", code: code > 0 ? code : EIO, busError: busError))
    }

    func cancel() {
        if let slot { sd_bus_slot_unref(slot) }
        slot = nil
    }
}
