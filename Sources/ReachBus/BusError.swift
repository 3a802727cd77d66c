import CSystemd
import ReachPOSIX

/// A failed sd-bus or system call: the ``ReachPOSIX/SystemCallError`` that explains it and, when
/// the bus answered with a D-Bus error, that error's name and message.
package struct BusError: Error, CustomStringConvertible, Sendable, Hashable {
    /// The call that failed and its errno.
    package var failure: SystemCallError
    /// `org.freedesktop.DBus.Error.AccessDenied: ...`, when the failure came back from the bus.
    package var busError: String?

    /// From an sd-bus return value (a negative errno) or a positive errno.
    package init(_ operation: String, code: Int32, busError: String? = nil) {
        self.init(SystemCallError(operation, code: code < 0 ? -code : code), busError: busError)
    }

    /// A system call's failure on the way to the bus (its thread, its doorbell).
    package init(_ failure: SystemCallError, busError: String? = nil) {
        self.failure = failure
        self.busError = busError
    }

    /// The errno in words, such as "no such file", with the D-Bus error if there is one.
    package var reason: String {
        guard let busError else { return failure.reason }
        return "\(failure.reason) (\(busError))"
    }

    package var description: String { "\(failure.call) failed: \(reason) (errno \(failure.code))" }
}

/// Turns an sd-bus return value into a thrown ``BusError`` when it is negative, else returns it.
@discardableResult
package func checkBus(_ operation: String, _ result: Int32) throws(BusError) -> Int32 {
    guard result >= 0 else { throw BusError(operation, code: result) }
    return result
}

extension BusError {
    /// `org.freedesktop.DBus.Error.ServiceUnknown: The name is not activatable`, or nil when
    /// `error` holds no D-Bus error.
    package static func text(of error: sd_bus_error) -> String? {
        guard let name = error.name else { return nil }
        var text = String(cString: name)
        if let message = error.message { text += ": " + String(cString: message) }
        return text
    }
}
