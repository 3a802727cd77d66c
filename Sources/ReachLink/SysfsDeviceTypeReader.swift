import Glibc

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
        if let uevent = readSmallFile(directory + "/uevent") {
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

    private static func readSmallFile(_ path: String, limit: Int = 4096) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: limit)
        var filled = 0
        while filled < limit {
            let count = bytes.withUnsafeMutableBytes { buffer in
                read(fd, buffer.baseAddress.map { $0 + filled }, limit - filled)
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            filled += count
        }
        return String(decoding: bytes[..<filled], as: UTF8.self)
    }
}
