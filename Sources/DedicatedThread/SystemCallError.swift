/// A failed system call and its errno, for adapters to wrap in their own errors.
public struct SystemCallError: Error, Sendable, CustomStringConvertible {
    public let call: String
    public let code: Int32

    public init(_ call: String, code: Int32) {
        self.call = call
        self.code = code
    }

    public var description: String { "\(call) failed (errno \(code))" }
}
