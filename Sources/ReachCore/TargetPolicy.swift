/// How the targets' health combines into one answer.
public enum TargetPolicy: Sendable, Hashable, CustomStringConvertible {
    /// Every target must be healthy.
    case all
    /// One healthy target is enough.
    case any
    /// At least this many targets must be healthy.
    case quorum(Int)

    public var description: String {
        switch self {
        case .all: "all"
        case .any: "any"
        case .quorum(let k): "quorum(\(k))"
        }
    }
}
