import Glibc
import ReachPOSIX

/// Reads the device-type hints of `/sys/class/net/NAME` with plain system calls.
enum SysfsDeviceTypeReader {
    static func hints(forInterface name: String) -> DeviceTypeHints {
        hints(forInterface: name, root: "/sys/class/net")
    }

    /// `root` is a parameter so tests can point it at a fake tree.
    static func hints(forInterface name: String, root: String) -> DeviceTypeHints {
        guard isSafePathComponent(name) else { return DeviceTypeHints() }
        let directory = root + "/" + name
        var hints = DeviceTypeHints()
        hints.isWireless = access(directory + "/wireless", F_OK) == 0 || access(directory + "/phy80211", F_OK) == 0
        // A sysfs attribute is at most a page.
        if let uevent = try? BoundedFile.readText(directory + "/uevent", limit: 4096).get() {
            for line in uevent.split(separator: "\n") where line.hasPrefix("DEVTYPE=") {
                hints.deviceType = String(line.dropFirst("DEVTYPE=".count))
            }
        }
        return hints
    }

    /// Kernel interface names never contain `/` and are never `.` or `..`; a name from the wire that
    /// does is not used as a path.
    static func isSafePathComponent(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.contains("/") && !name.utf8.contains(0)
    }
}
