import Foundation
import ReachCore
import ReachTesting
import Testing

@testable import ReachLink

@Suite struct InterfaceKindProbeTests {
    private func probe(_ hints: [String: DeviceTypeHints]) -> InterfaceKindProbe {
        InterfaceKindProbe { hints[$0] ?? DeviceTypeHints() }
    }

    @Test func classification() {
        let probe = probe([
            "wlan0": DeviceTypeHints(isWireless: true, deviceType: "wlan"),
            "wlp2s0": DeviceTypeHints(isWireless: false, deviceType: "wlan"),
            "wwan0": DeviceTypeHints(deviceType: "wwan"),
            "br0": DeviceTypeHints(deviceType: "bridge"),
        ])
        func kind(
            _ name: String,
            type: UInt16 = 1,
            flags: UInt32 = 0x1,
            linkKind: String? = nil,
            wireless: Bool = false
        ) -> InterfaceKind {
            probe.kind(name: name, deviceType: type, flags: flags, linkKind: linkKind, hasWirelessAttribute: wireless)
        }
        #expect(kind("lo", type: 772) == .loopback)
        #expect(kind("weird", flags: 0x8) == .loopback)  // IFF_LOOPBACK
        #expect(kind("eth0") == .ethernet)
        #expect(kind("wlan0") == .wifi)
        #expect(kind("wlp2s0") == .wifi)
        #expect(kind("mystery", wireless: true) == .wifi)
        #expect(kind("wwan0", type: 65534) == .wwan)
        #expect(kind("br0", linkKind: "bridge") == .virtual)
        for linkKind in ["veth", "bond", "vlan", "wireguard", "tun"] {
            #expect(kind("x", linkKind: linkKind) == .virtual)
        }
        #expect(kind("ppp0", type: 512) == .other)
    }

    @Test func sysfsReaderFindsRadiosAndDeviceTypes() throws {
        let directory = try TemporaryDirectory("sysfs")
        let root = directory.url
        let files = FileManager.default
        try files.createDirectory(at: root.appendingPathComponent("wlan0/phy80211"), withIntermediateDirectories: true)
        try "DEVTYPE=wlan\nINTERFACE=wlan0\nIFINDEX=3\n".write(
            to: root.appendingPathComponent("wlan0/uevent"),
            atomically: true,
            encoding: .utf8
        )
        try files.createDirectory(at: root.appendingPathComponent("wwan0"), withIntermediateDirectories: true)
        try "INTERFACE=wwan0\nDEVTYPE=wwan\n".write(
            to: root.appendingPathComponent("wwan0/uevent"),
            atomically: true,
            encoding: .utf8
        )
        try files.createDirectory(at: root.appendingPathComponent("eth0"), withIntermediateDirectories: true)
        try "INTERFACE=eth0\nIFINDEX=2\n".write(
            to: root.appendingPathComponent("eth0/uevent"),
            atomically: true,
            encoding: .utf8
        )

        #expect(
            SysfsDeviceTypeReader.hints(forInterface: "wlan0", root: root.path)
                == DeviceTypeHints(isWireless: true, deviceType: "wlan")
        )
        #expect(
            SysfsDeviceTypeReader.hints(forInterface: "wwan0", root: root.path)
                == DeviceTypeHints(isWireless: false, deviceType: "wwan")
        )
        #expect(SysfsDeviceTypeReader.hints(forInterface: "eth0", root: root.path) == DeviceTypeHints())
        #expect(SysfsDeviceTypeReader.hints(forInterface: "absent", root: root.path) == DeviceTypeHints())
        #expect(SysfsDeviceTypeReader.hints(forInterface: "../wlan0", root: root.path + "/eth0") == DeviceTypeHints())
        #expect(!SysfsDeviceTypeReader.isSafePathComponent(".."))
        #expect(!SysfsDeviceTypeReader.isSafePathComponent(""))
    }
}
