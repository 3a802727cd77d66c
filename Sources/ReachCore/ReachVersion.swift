/// reachd's version, shared by the daemon, the CLI, status output and `reachd_build_info`.
public enum ReachVersion {
    public static let current = "0.1.0"
}
