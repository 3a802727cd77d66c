import Foundation
import ReachTestRigs

/// A process in reachd's namespace that unicasts netlink datagrams straight to reachd's own
/// netlink socket, as any local process can: forged `RTM_NEWLINK` messages saying `m0` is down,
/// and random bytes. Only the kernel may speak for the link table, so reachd must drop them all.
enum NetlinkForger {
    private static let script = """
        import os, random, socket, struct, sys
        pid, count = int(sys.argv[1]), int(sys.argv[2])
        inodes = set()
        for fd in os.listdir(f'/proc/{pid}/fd'):
            try:
                target = os.readlink(f'/proc/{pid}/fd/{fd}')
            except OSError:
                continue
            if target.startswith('socket:['):
                inodes.add(int(target[8:-1]))
        ports = []
        for line in open('/proc/net/netlink').read().splitlines()[1:]:
            fields = line.split()
            if int(fields[1]) == 0 and int(fields[9]) in inodes:
                ports.append(int(fields[2]))
        def attribute(kind, data):
            length = 4 + len(data)
            return struct.pack('=HH', length, kind) + data + b'\\0' * ((4 - length % 4) % 4)
        index = socket.if_nametoindex('m0')
        body = struct.pack('=BxHiII', 0, 1, index, 0, 0xFFFFFFFF) + attribute(3, b'm0\\0') + attribute(16, bytes([2]))
        forged = struct.pack('=IHHII', 16 + len(body), 16, 0, 0, os.getpid()) + body
        sender = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
        sender.bind((0, 0))
        for port in ports:
            for _ in range(count):
                sender.sendto(forged, (port, 0))
                sender.sendto(os.urandom(random.randint(1, 512)), (port, 0))
        print('sent to', len(ports), flush=True)
        """

    /// Sends `count` forged link-down messages and `count` random datagrams to every
    /// `NETLINK_ROUTE` socket reachd holds; returns how many sockets got them.
    static func send(to daemon: MatrixDaemon, count: Int) async throws -> Int {
        let result = try await daemon.namespace.run([
            "/usr/bin/env", "python3", "-c", script, "\(daemon.processIdentifier)", "\(count)",
        ])
        guard result.status == 0,
            let sockets = Int(
                result.output.split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            )
        else {
            throw ChildProcess.Failed(description: "the netlink forger failed: \(result.errors)")
        }
        return sockets
    }
}
