import CNetlink
import Glibc
import ReachCore

/// What sysfs says about a device that netlink does not: whether it is a radio, and its `DEVTYPE`.
struct DeviceTypeHints: Sendable, Hashable {
    /// `/sys/class/net/NAME/wireless` or `phy80211` exists.
    var isWireless = false
    /// `DEVTYPE=` from `/sys/class/net/NAME/uevent` (`wlan`, `wwan`, `bridge`, `vlan`, ...).
    var deviceType: String?
}

/// Decides an interface's ``InterfaceKind`` from its netlink facts plus sysfs hints.
///
/// Netlink alone cannot tell wifi from wired ethernet (both are `ARPHRD_ETHER` without a link kind),
/// nor a modem from a tunnel; sysfs can.
struct InterfaceKindProbe: Sendable {
    /// Reads the hints for an interface name; injected so the classification is testable without sysfs.
    var readHints: @Sendable (String) -> DeviceTypeHints

    /// Reads the real `/sys/class/net`.
    static let sysfs = InterfaceKindProbe(readHints: SysfsDeviceTypeReader.hints(forInterface:))

    /// For a namespace other than ours: `/sys/class/net` shows the namespace sysfs was mounted in, so
    /// reading it would describe a different device that happens to share the name.
    static let netlinkOnly = InterfaceKindProbe { _ in DeviceTypeHints() }

    private static let loopbackFlag = UInt32(IFF_LOOPBACK)

    func kind(
        name: String,
        deviceType: UInt16,
        flags: UInt32,
        linkKind: String?,
        hasWirelessAttribute: Bool
    ) -> InterfaceKind {
        if flags & Self.loopbackFlag != 0 || Int(deviceType) == Int(CNETLINK_ARPHRD_LOOPBACK) {
            return .loopback
        }
        let hints = readHints(name)
        if hasWirelessAttribute || hints.isWireless || hints.deviceType == "wlan" {
            return .wifi
        }
        if hints.deviceType == "wwan" {
            return .wwan
        }
        if linkKind != nil {
            return .virtual
        }
        if Int(deviceType) == Int(CNETLINK_ARPHRD_ETHER) {
            return .ethernet
        }
        return .other
    }
}
