/// A YAML tag: the type a node was written with (`!!int 5`), or decided by ``ImplicitTag`` for a
/// plain scalar written without one.
struct YAMLTag: RawRepresentable, Hashable, Sendable {
    let rawValue: String

    init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// No tag written: a plain scalar's type is decided by its text.
    static let implicit = YAMLTag(rawValue: "")
    /// `!`: a string, list or mapping, whatever the text.
    static let nonSpecific = YAMLTag(rawValue: "!")
    static let str = YAMLTag(rawValue: "tag:yaml.org,2002:str")
    static let seq = YAMLTag(rawValue: "tag:yaml.org,2002:seq")
    static let map = YAMLTag(rawValue: "tag:yaml.org,2002:map")
    static let bool = YAMLTag(rawValue: "tag:yaml.org,2002:bool")
    static let float = YAMLTag(rawValue: "tag:yaml.org,2002:float")
    static let null = YAMLTag(rawValue: "tag:yaml.org,2002:null")
    static let int = YAMLTag(rawValue: "tag:yaml.org,2002:int")
}
