/// A document's optional value, written as `null` when it is absent (Swift's synthesized `Codable`
/// would leave the key out) and read as absent when it is `null` or missing.
///
/// The contract's readers tell "not known" (`null`) from "renamed" (a missing key), so every key is
/// always written. Marking the property is all a new optional field needs: the synthesized coding
/// does the rest, and a document from a reachd older than the field reads it as absent.
@propertyWrapper
package struct Nullable<Value: Codable & Sendable & Hashable>: Codable, Sendable, Hashable {
    package var wrappedValue: Value?

    package init(wrappedValue: Value?) {
        self.wrappedValue = wrappedValue
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(Value.self)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

/// A document's list that a reachd older than it did not write: read as empty when the key is
/// missing, written as usual.
@propertyWrapper
package struct AddedLater<Element: Codable & Sendable & Hashable>: Codable, Sendable, Hashable {
    package var wrappedValue: [Element]

    package init(wrappedValue: [Element]) {
        self.wrappedValue = wrappedValue
    }

    package init(from decoder: any Decoder) throws {
        wrappedValue = try decoder.singleValueContainer().decode([Element].self)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wrappedValue)
    }
}

// Synthesized decoding asks for a wrapped property's key with `decode(_:forKey:)`, which throws when
// the key is missing; these overloads, more specific than the generic one, read a missing key as
// absent instead.
extension KeyedDecodingContainer {
    package func decode<Value>(_ type: Nullable<Value>.Type, forKey key: Key) throws -> Nullable<Value> {
        try decodeIfPresent(type, forKey: key) ?? Nullable(wrappedValue: nil)
    }

    package func decode<Element>(_ type: AddedLater<Element>.Type, forKey key: Key) throws -> AddedLater<Element> {
        try decodeIfPresent(type, forKey: key) ?? AddedLater(wrappedValue: [])
    }
}
