import CSystemd
import Glibc

/// A received message, valid only while whoever handed it out keeps it: the callback it is given
/// to, or the ``BusReply`` it belongs to. Read its arguments in order.
package struct BusMessage {
    package let pointer: OpaquePointer

    /// Reads the next argument as a D-Bus boolean (`b`).
    package func readBool() throws(BusError) -> Bool {
        // sd-bus stores `b` as a C int.
        var value: Int32 = 0
        try read("b", into: &value)
        return value != 0
    }

    /// Reads the next argument as an unsigned 32-bit integer (`u`).
    package func readUInt32() throws(BusError) -> UInt32 {
        var value: UInt32 = 0
        try read("u", into: &value)
        return value
    }

    /// Reads the next argument as a string (`s`).
    package func readString() throws(BusError) -> String {
        var value: UnsafePointer<CChar>?
        try read("s", into: &value)
        guard let value else { throw BusError("sd_bus_message_read_basic(s)", code: ENXIO) }
        return String(cString: value)
    }

    private func read<Value>(_ type: Unicode.Scalar, into value: inout Value) throws(BusError) {
        let result = withUnsafeMutablePointer(to: &value) {
            sd_bus_message_read_basic(pointer, CChar(UInt8(ascii: type)), $0)
        }
        // 0: no more arguments; a message without the argument its signature promises.
        guard try checkBus("sd_bus_message_read_basic(\(type))", result) > 0 else {
            throw BusError("sd_bus_message_read_basic(\(type))", code: ENXIO)
        }
    }
}

/// A method call's reply, owned until released.
package final class BusReply {
    package let message: BusMessage

    package init(pointer: OpaquePointer) {
        message = BusMessage(pointer: pointer)
    }

    deinit {
        sd_bus_message_unref(message.pointer)
    }
}

/// Appends arguments to a message under construction, without sd-bus's variadic helpers (Swift
/// cannot call them): one basic value at a time, containers opened and closed around their contents.
package struct BusMessageWriter {
    package let pointer: OpaquePointer

    /// Appends a string (`s`).
    package func append(_ value: String) throws(BusError) {
        let result = value.withCString { sd_bus_message_append_basic(pointer, CChar(UInt8(ascii: "s")), $0) }
        try checkBus("sd_bus_message_append_basic(s)", result)
    }

    /// Appends an unsigned 32-bit integer (`u`).
    package func append(_ value: UInt32) throws(BusError) {
        try appendBasic("u", value)
    }

    /// Appends a signed 32-bit integer (`i`).
    package func append(_ value: Int32) throws(BusError) {
        try appendBasic("i", value)
    }

    /// Appends a byte (`y`).
    package func append(_ value: UInt8) throws(BusError) {
        try appendBasic("y", value)
    }

    /// Appends a boolean (`b`, a C int to sd-bus).
    package func append(_ value: Bool) throws(BusError) {
        try appendBasic("b", Int32(value ? 1 : 0))
    }

    private func appendBasic<Value>(_ type: Unicode.Scalar, _ value: Value) throws(BusError) {
        var value = value
        let result = withUnsafePointer(to: &value) {
            sd_bus_message_append_basic(pointer, CChar(UInt8(ascii: type)), $0)
        }
        try checkBus("sd_bus_message_append_basic(\(type))", result)
    }

    /// Opens a container (`a` array, `e` dictionary entry, `v` variant, `r` struct) whose contents
    /// have the signature `contents`, lets `body` append them, and closes it.
    package func container(
        _ type: Unicode.Scalar,
        _ contents: String,
        _ body: () throws(BusError) -> Void
    ) throws(BusError) {
        let result = contents.withCString { sd_bus_message_open_container(pointer, CChar(UInt8(ascii: type)), $0) }
        try checkBus("sd_bus_message_open_container(\(type)\(contents))", result)
        try body()
        try checkBus("sd_bus_message_close_container", sd_bus_message_close_container(pointer))
    }
}
