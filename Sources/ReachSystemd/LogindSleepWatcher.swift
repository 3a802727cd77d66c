import Logging
import ReachBus
import ReachPOSIX

/// Tells the monitor when the system is about to sleep and when it woke, from logind's
/// `PrepareForSleep(b)` signal on the system bus.
///
/// logind sends `PrepareForSleep(true)` just before suspending or hibernating and
/// `PrepareForSleep(false)` after resuming. Only signals sent by the owner of
/// `org.freedesktop.login1` count; anyone else's are not delivered.
///
/// A dedicated thread drives the sd-bus connection, so the Swift cooperative pool is never held
/// up; `onChange` is called on that thread.
///
/// ```swift
/// let watcher = LogindSleepWatcher(logger: logger)
/// await watcher.run { sleeping in monitor.setSystemSleeping(sleeping) }
/// ```
package final class LogindSleepWatcher: Sendable {
    static let prepareForSleep = SignalName(
        sender: "org.freedesktop.login1",
        path: "/org/freedesktop/login1",
        interface: "org.freedesktop.login1.Manager",
        member: "PrepareForSleep"
    )

    private let logger: Logger
    private let busAddress: String?

    /// - Parameters:
    ///   - logger: Receives the one warning when there is no bus or the bus goes away, and debug
    ///     notes on subscribing and on each signal.
    ///   - busAddress: A D-Bus address such as `unix:path=/run/dbus/system_bus_socket`; nil for
    ///     the system bus (`DBUS_SYSTEM_BUS_ADDRESS` if set, else the standard socket).
    package init(logger: Logger, busAddress: String? = nil) {
        self.logger = logger
        self.busAddress = busAddress
    }

    /// Runs until the calling task is cancelled, calling `onChange(true)` on
    /// `PrepareForSleep(true)` and `onChange(false)` on `PrepareForSleep(false)`.
    ///
    /// Where there is no system bus (or it cannot be reached, or refuses the subscription), logs
    /// one warning naming the cause and returns at once, so the daemon carries on without sleep
    /// detection. If the bus goes away mid-run, it logs one warning and returns too; if the last
    /// signal said the system was going to sleep, it first calls `onChange(false)`, since nothing
    /// would ever report the wake. Cancellation stops it within milliseconds.
    package func run(onChange: @escaping @Sendable (Bool) -> Void) async {
        let doorbell: ShutdownDoorbell
        do {
            doorbell = try ShutdownDoorbell()
        } catch {
            warn(.init(.unavailable("cannot start watching"), BusError(error)), onChange: onChange)
            return
        }
        let outcome: WatchOutcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<WatchOutcome, Never>) in
                do throws(SystemCallError) {
                    try DedicatedThread.start(named: "reachd-sd-bus") { [self] in
                        continuation.resume(returning: watch(doorbell: doorbell, onChange: onChange))
                    }
                } catch {
                    continuation.resume(
                        returning: WatchOutcome(.unavailable("cannot start the bus thread"), BusError(error))
                    )
                }
            }
        } onCancel: {
            doorbell.ring()
        }
        guard outcome.failure != nil else {
            logger.debug("stopped watching logind's PrepareForSleep", metadata: ["bus": "\(busDescription)"])
            return
        }
        warn(outcome, onChange: onChange)
    }

    // MARK: The bus thread

    /// Why watching stopped other than by cancellation.
    enum Failure: Equatable {
        /// No bus could be used at all.
        case unavailable(String)
        /// The bus refused the subscription.
        case refused
        /// The connection went away while watching.
        case lost
    }

    struct WatchOutcome {
        var failure: Failure?
        var error: BusError?
        /// The last signal said the system was going to sleep.
        var reportedSleeping = false

        init(_ failure: Failure? = nil, _ error: BusError? = nil, reportedSleeping: Bool = false) {
            self.failure = failure
            self.error = error
            self.reportedSleeping = reportedSleeping
        }
    }

    /// What the callbacks learned, read by the loop between rounds. Confined to the bus thread.
    private final class Progress {
        var subscribed = false
        var refusal: BusError?
        var sleeping = false
    }

    /// The body of the bus thread: connects, subscribes, and processes until the doorbell rings or
    /// the bus fails. Every sd-bus handle is created, used and released here.
    private func watch(doorbell: ShutdownDoorbell, onChange: @escaping @Sendable (Bool) -> Void) -> WatchOutcome {
        if doorbell.hasRung { return WatchOutcome() }
        let bus: BusConnection
        do {
            bus = try BusConnection(busAddress.map(BusConnection.Bus.address) ?? .system)
        } catch {
            return WatchOutcome(.unavailable("cannot connect to the system bus"), error)
        }
        let progress = Progress()
        let logger = self.logger
        let busDescription = self.busDescription
        do {
            try bus.subscribe(
                to: Self.prepareForSleep,
                installed: { error in
                    if let error {
                        progress.refusal = error
                    } else {
                        progress.subscribed = true
                        logger.debug(
                            "watching logind's PrepareForSleep for sleep and wake",
                            metadata: ["bus": "\(busDescription)"]
                        )
                    }
                },
                received: { message in
                    do {
                        let sleeping = try message.readBool()
                        logger.debug("PrepareForSleep(\(sleeping))")
                        progress.sleeping = sleeping
                        onChange(sleeping)
                    } catch {
                        logger.notice(
                            "ignoring a PrepareForSleep signal without a boolean argument",
                            metadata: ["error": "\(error)"]
                        )
                    }
                }
            )
            while true {
                while try bus.process() {
                    if progress.refusal != nil { break }
                }
                if let refusal = progress.refusal {
                    return WatchOutcome(.refused, refusal, reportedSleeping: progress.sleeping)
                }
                if try bus.wait(orUntil: doorbell) == .doorbell { return WatchOutcome() }
            }
        } catch {
            // Before the subscription took, the bus was never usable (authentication or Hello
            // failed, or it hung up at once); after, it went away.
            let failure: Failure = progress.subscribed ? .lost : .unavailable("the system bus closed the connection")
            return WatchOutcome(failure, error, reportedSleeping: progress.sleeping)
        }
    }

    // MARK: Reporting

    private var busDescription: String { busAddress ?? "system" }

    /// Logs the one warning for a failed watch; resets a reported sleep so probing resumes.
    private func warn(_ outcome: WatchOutcome, onChange: @Sendable (Bool) -> Void) {
        let reason = outcome.error?.reason ?? "unknown error"
        let what: String
        switch outcome.failure {
        case .unavailable(let context)?: what = "\(context): \(reason)"
        case .refused?: what = "the bus refused the PrepareForSleep subscription: \(reason)"
        case .lost?: what = "lost the system bus connection: \(reason)"
        case nil: return
        }
        var metadata: Logger.Metadata = ["bus": "\(busDescription)"]
        if let error = outcome.error { metadata["error"] = "\(error)" }
        if outcome.reportedSleeping {
            logger.warning("sleep detection off: \(what); assuming the system is awake", metadata: metadata)
            onChange(false)
        } else {
            logger.warning("sleep detection off: \(what)", metadata: metadata)
        }
    }
}
