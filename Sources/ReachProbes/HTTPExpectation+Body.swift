import FoundationEssentials
import NIOCore
import ReachCore

#if canImport(Glibc)
import Glibc
#endif

extension HTTPExpectation {
    /// Whether judging an answer needs its body.
    var needsBody: Bool { bodyContains != nil || json != nil }

    /// Why `body` does not meet the expectation, or `nil` when it does.
    func mismatch(in body: ByteBuffer) -> String? {
        if let needle = bodyContains {
            let text = String(buffer: body)
            if !text.contains(needle) { return "body does not contain \"\(needle)\"" }
        }
        if let json {
            guard let document = try? JSONDecoder().decode(JSONValue.self, from: Data(body.readableBytesView)) else {
                return "body is not JSON"
            }
            guard let found = document.value(at: json.pointer) else {
                return "no value at JSON pointer \(json.pointer)"
            }
            guard case .scalar(let scalar) = found else {
                return "\(json.pointer) is not a scalar"
            }
            if scalar != json.equals { return "\(json.pointer) is \(scalar), expected \(json.equals)" }
        }
        return nil
    }
}

/// A parsed JSON document, just enough to follow an RFC 6901 pointer to a scalar.
enum JSONValue: Decodable {
    case scalar(JSONScalar)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .scalar(.null)
        } else if let bool = try? container.decode(Bool.self) {
            self = .scalar(.bool(bool))
        } else if let number = try? container.decode(Double.self) {
            self = .scalar(.number(number))
        } else if let string = try? container.decode(String.self) {
            self = .scalar(.string(string))
        } else if let array = try? container.decode([JSONValue].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// The value at `pointer` ("" is the whole document; "~1" and "~0" escape "/" and "~").
    func value(at pointer: String) -> JSONValue? {
        let tokens = pointer.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map {
            String($0.replacing("~1", with: "/").replacing("~0", with: "~"))
        }
        var current = self
        for token in tokens {
            switch current {
            case .object(let members):
                guard let next = members[token] else { return nil }
                current = next
            case .array(let elements):
                guard let index = Int(token), elements.indices.contains(index) else { return nil }
                current = elements[index]
            case .scalar:
                return nil
            }
        }
        return current
    }
}
