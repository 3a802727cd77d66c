import Glibc
import ReachPOSIX
import ReachSupport

/// Whether this process may send ICMP echoes (``PingSocket``), and when it may not, why, in words
/// that name the setting to change: the kernel allows ping sockets only to the groups in
/// `net.ipv4.ping_group_range` (for both families). A bare kernel's, and every new network
/// namespace's, is `1 0` (no group, root's included); systemd's sysctl opens it to all
/// (`0 2147483647`).
package enum PingPermission {
    /// The sysctl, in its `/proc` file.
    static let rangeFile = "/proc/sys/net/ipv4/ping_group_range"

    /// `nil` when this process may open a ping socket of `family`; else a sentence for the start-up
    /// log and `--check-config`, naming the sysctl, its value and this process's group.
    package static func problem(_ family: IPFamily = .ipv4) -> String? {
        switch PingSocket.open(family) {
        case .success(let descriptor):
            close(descriptor)
            return nil
        case .failure(.notPermitted(let code)) where code == EACCES || code == EPERM:
            let group = effectiveGroup
            return """
                ICMP echo is not allowed: net.ipv4.ping_group_range is "\(range)", which leaves out this process's \
                group \(group.name) (gid \(group.id)), so icmp targets fail with not_permitted; allow it with \
                sysctl net.ipv4.ping_group_range="\(group.id) \(group.id)" (systemd's default is "0 2147483647")
                """
        case .failure(.notPermitted(let code)), .failure(.failed(let code)):
            return
                "ICMP echo over \(family.rawValue) is not possible here (\(SystemCallError.reason(code))), so icmp targets fail"
        }
    }

    /// A probe's detail for a refused ping socket: short, as a detail is bounded.
    static func refusal(_ code: Int32, family: IPFamily) -> String {
        guard code == EACCES || code == EPERM else {
            return "no ICMP\(family == .ipv6 ? "v6" : "") echo sockets here (\(SystemCallError.reason(code)))"
        }
        let group = effectiveGroup
        return "net.ipv4.ping_group_range \"\(range)\" leaves out group \(group.name) (\(group.id))"
    }

    /// The sysctl's value, its two numbers separated by a space.
    private static var range: String {
        let text = (try? BoundedFile.readText(rangeFile, limit: 256).get()) ?? "?"
        return text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).joined(separator: " ")
    }

    /// This process's effective group: its number and name.
    private static var effectiveGroup: (id: gid_t, name: String) {
        let id = getegid()
        var entry = group()
        var found: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 4096)
        let status = getgrgid_r(id, &entry, &buffer, buffer.count, &found)
        guard status == 0, found != nil, let name = entry.gr_name else { return (id, "\(id)") }
        return (id, String(cString: name))
    }
}
