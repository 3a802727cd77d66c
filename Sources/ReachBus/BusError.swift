import CSystemd
import Glibc

/// A failed sd-bus or system call: the errno that explains it and, when the bus answered with a
/// D-Bus error, that error's name and message.
package struct BusError: Error, CustomStringConvertible, Sendable, Hashable {
    package var operation: String
    /// A positive errno.
    package var code: Int32
    /// `org.freedesktop.DBus.Error.AccessDenied: ...`, when the failure came back from the bus.
    package var busError: String?

    /// From an sd-bus return value (a negative errno) or a positive errno.
    package init(_ operation: String, code: Int32, busError: String? = nil) {
        self.operation = operation
        self.code = code < 0 ? -code : code
        self.busError = busError
    }

    /// The errno text, such as "No such file or directory", with the D-Bus error if there is one.
    package var reason: String {
        let text = String(cString: strerror(code))
        guard let busError else { return text }
        return "\(text) (\(busError))"
    }

    package var description: String { "\(operation) failed: \(reason) (errno \(code))" }
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
