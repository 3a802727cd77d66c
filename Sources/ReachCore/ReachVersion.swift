/// reachd's version, shared by the daemon, the CLI, status output and `reachd_build_info`.
package enum ReachVersion {
    package static let current = "0.1.0"
}
