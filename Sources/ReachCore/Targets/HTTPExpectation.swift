/// What an HTTP health answer must look like to count as healthy.
package struct HTTPExpectation: Sendable, Hashable {
    /// Accepted status codes; 200-299 by default.
    package var statuses: [ClosedRange<Int>]
    /// A substring the body must contain.
    package var bodyContains: String?
    /// A value the JSON body must hold, e.g. `/status` == `"ok"`.
    package var json: JSONExpectation?

    package init(statuses: [ClosedRange<Int>] = [200...299], bodyContains: String? = nil, json: JSONExpectation? = nil)
    {
        self.statuses = statuses
        self.bodyContains = bodyContains
        self.json = json
    }

    package func accepts(status: Int) -> Bool { statuses.contains { $0.contains(status) } }
}

/// A JSON pointer (RFC 6901) into a health body and the scalar it must hold there.
package struct JSONExpectation: Sendable, Hashable {
    package var pointer: String
    package var equals: JSONScalar

    package init(pointer: String, equals: JSONScalar) {
        self.pointer = pointer
        self.equals = equals
    }
}

/// A JSON scalar a health body is expected to hold at some pointer.
package enum JSONScalar: Sendable, Hashable, CustomStringConvertible {
    case string(String)
    case number(Double)
    case bool(Bool)
    case null

    package var description: String {
        switch self {
        case .string(let value): "\"\(value)\""
        case .number(let value): value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        case .bool(let value): String(value)
        case .null: "null"
        }
    }
}
