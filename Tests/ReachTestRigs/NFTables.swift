/// nftables in a test's namespace: what makes loss on a real wire where the kernel has no `netem`
/// (a share of the packets, or all of them, dropped at random on input).
package enum NFTables {
    /// Drops, on input in `namespace`, the packets `match` selects (`udp dport 53`, `icmp type
    /// echo-request`), all of them or `percent` of them at random (`numgen random mod 100 < N`).
    package static func drop(in namespace: TestNamespace, _ match: String, percent: Int = 100) async throws {
        let share = percent >= 100 ? "" : " numgen random mod 100 < \(percent)"
        let rules = """
            table inet reachd_test_loss {
              chain input {
                type filter hook input priority 0;
              }
            }
            add rule inet reachd_test_loss input \(match)\(share) drop

            """
        try await namespace.execute(["nft", "-f", "-"], input: rules)
    }

    /// Stops every ``drop(in:_:percent:)`` in `namespace`: the wire is clean again.
    package static func stopDropping(in namespace: TestNamespace) async throws {
        try await namespace.execute(["nft", "delete", "table", "inet", "reachd_test_loss"])
    }
}
