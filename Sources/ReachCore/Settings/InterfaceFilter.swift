import ReachSupport

/// Which interfaces count toward connectivity, by name, as shell-style globs (`*`, `?`, `[a-z]`, `[!0-9]`).
///
/// An interface counts when it matches an `include` pattern (an empty list includes everything) and no
/// `exclude` pattern. The default excludes the host side of container and VM plumbing, which has
/// addresses and carrier but is no path to a server.
public struct InterfaceFilter: Sendable, Hashable {
    package var include: [String]
    package var exclude: [String]

    /// Host-side container and virtual-machine interfaces: Docker, Podman, libvirt, LXC/LXD, CNI, Calico, Flannel.
    public static let defaultExcludes = [
        "docker*", "br-*", "veth*", "virbr*", "vnet*", "lxcbr*", "lxdbr*",
        "cni*", "flannel*", "cali*", "podman*", "kube-*",
    ]

    public init(include: [String] = [], exclude: [String] = InterfaceFilter.defaultExcludes) {
        self.include = include
        self.exclude = exclude
    }

    package func admits(_ name: String) -> Bool {
        (include.isEmpty || include.contains { Glob($0).matches(name) })
            && !exclude.contains { Glob($0).matches(name) }
    }
}
