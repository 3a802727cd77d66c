/// What an HTTP health answer must look like to count as healthy.
public struct HTTPExpectation: Sendable, Hashable {
    /// Accepted status codes; 200-299 by default.
    public var statuses: [ClosedRange<Int>]
    /// A substring the body must contain.
    public var bodyContains: String?
    /// A value the JSON body must hold, e.g. `/status` == `"ok"`.
    public var json: JSONExpectation?

    public init(statuses: [ClosedRange<Int>] = [200...299], bodyContains: String? = nil, json: JSONExpectation? = nil) {
        self.statuses = statuses
        self.bodyContains = bodyContains
        self.json = json
    }

    public func accepts(status: Int) -> Bool { statuses.contains { $0.contains(status) } }
}

/// A JSON pointer (RFC 6901) into a health body and the scalar it must hold there.
public struct JSONExpectation: Sendable, Hashable {
    public var pointer: String
    public var equals: JSONScalar

    public init(pointer: String, equals: JSONScalar) {
        self.pointer = pointer
        self.equals = equals
    }
}

/// A JSON scalar a health body is expected to hold at some pointer.
public enum JSONScalar: Sendable, Hashable, CustomStringConvertible {
    case string(String)
    case number(Double)
    case bool(Bool)
    case null

    public var description: String {
        switch self {
        case .string(let value): "\"\(value)\""
        case .number(let value): value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        case .bool(let value): String(value)
        case .null: "null"
        }
    }
}
