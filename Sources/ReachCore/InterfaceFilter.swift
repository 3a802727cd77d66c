/// Which interfaces count toward connectivity, by name, as shell-style globs (`*`, `?`, `[a-z]`, `[!0-9]`).
///
/// An interface counts when it matches an `include` pattern (an empty list includes everything) and no
/// `exclude` pattern. The default excludes the host side of container and VM plumbing, which has
/// addresses and carrier but is no path to a server.
public struct InterfaceFilter: Sendable, Hashable {
    public var include: [String]
    public var exclude: [String]

    /// Host-side container and virtual-machine interfaces: Docker, Podman, libvirt, LXC/LXD, CNI, Calico, Flannel.
    public static let defaultExcludes = [
        "docker*", "br-*", "veth*", "virbr*", "vnet*", "lxcbr*", "lxdbr*",
        "cni*", "flannel*", "cali*", "podman*", "kube-*",
    ]

    public init(include: [String] = [], exclude: [String] = InterfaceFilter.defaultExcludes) {
        self.include = include
        self.exclude = exclude
    }

    public func admits(_ name: String) -> Bool {
        (include.isEmpty || include.contains { Glob.matches($0, name) })
            && !exclude.contains { Glob.matches($0, name) }
    }
}

/// Shell-style pattern matching over unicode scalars, iterative with single backtracking for `*`.
enum Glob {
    static func matches(_ pattern: String, _ name: String) -> Bool {
        let p = Array(pattern.unicodeScalars)
        let s = Array(name.unicodeScalars)
        var pi = 0, si = 0
        var star: (p: Int, s: Int)? = nil
        while si < s.count {
            if pi < p.count, p[pi] == "*" {
                star = (pi, si)
                pi += 1
            } else if pi < p.count, let next = matchOne(p, pi, s[si]) {
                pi = next
                si += 1
            } else if let resume = star {
                pi = resume.p + 1
                si = resume.s + 1
                star = (resume.p, resume.s + 1)
            } else {
                return false
            }
        }
        while pi < p.count, p[pi] == "*" { pi += 1 }
        return pi == p.count
    }

    /// Matches one pattern element at `index` against `scalar`; returns the index after the element.
    private static func matchOne(_ p: [Unicode.Scalar], _ index: Int, _ scalar: Unicode.Scalar) -> Int? {
        switch p[index] {
        case "?":
            return index + 1
        case "[":
            guard let close = p[(index + 1)...].dropFirst().firstIndex(of: "]") else {
                return scalar == "[" ? index + 1 : nil
            }
            var body = p[(index + 1)..<close]
            let negated = body.first == "!" || body.first == "^"
            if negated { body = body.dropFirst() }
            var matched = false
            var i = body.startIndex
            while i < body.endIndex {
                if i + 2 < body.endIndex, body[i + 1] == "-" {
                    // A reversed range, like [9-0], matches nothing (as in fnmatch).
                    matched = matched || (body[i] <= body[i + 2] && (body[i]...body[i + 2]).contains(scalar))
                    i += 3
                } else {
                    matched = matched || body[i] == scalar
                    i += 1
                }
            }
            return matched != negated ? close + 1 : nil
        case let literal:
            return literal == scalar ? index + 1 : nil
        }
    }
}
