@testable import ReachLink

/// The captured namespace as batches, and a table loaded from its dumps.
enum CapturedState {
    static func batches(_ hexes: [String]) -> [NetlinkBatch] {
        NetlinkBytes.datagrams(hexes).map { NetlinkMessageParser.parse($0) }
    }

    static let fakeProbe = InterfaceKindProbe { _ in DeviceTypeHints() }

    /// A table that has applied the three captured dumps, reconciled.
    static func loadedTable(probe: InterfaceKindProbe = fakeProbe) -> InterfaceTable {
        var table = InterfaceTable(kindProbe: probe)
        for (kind, capture) in [
            (DumpKind.links, CapturedNetlink.linkDump), (.addresses, CapturedNetlink.addressDump),
            (.routes, CapturedNetlink.routeDump),
        ] {
            table.beginDump(kind)
            for message in batches(capture).flatMap(\.messages) { table.apply(message) }
            _ = table.endDump(kind, consistent: true)
        }
        return table
    }

    static func apply(_ hexes: [String], to table: inout InterfaceTable) {
        for message in batches(hexes).flatMap(\.messages) { table.apply(message) }
    }
}
