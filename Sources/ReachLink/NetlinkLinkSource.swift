import Logging
import ReachCore
import ReachPOSIX
import Synchronization

/// The production ``LinkSource``: watches interfaces, addresses and routes through rtnetlink, the way
/// NetworkManager and systemd-networkd do, so reachd learns of a lost or regained link the moment the
/// kernel does, without polling.
///
/// It dumps links, addresses and routes at start and reports the first snapshot only once all three
/// are in; after that it reports after every datagram that changes something. It does not debounce:
/// coalescing is the monitor's job. Routes are re-dumped after link changes (the kernel drops routes
/// of a downed link without telling), and everything is re-dumped after an overrun.
///
/// A dedicated thread does the blocking reads, so the Swift cooperative pool is never held up;
/// `report` is called on that thread.
package final class NetlinkLinkSource: LinkSource {
    private let logger: Logger
    private let networkNamespacePath: String?
    private let receiveBufferSize: Int
    private let counters = NetlinkCounters()

    /// How many times the kernel reported `ENOBUFS` (lost notifications, each followed by a full
    /// re-dump), for a metric. Readable from any thread.
    package var overrunCount: Int { counters.overruns.load(ordering: .relaxed) }

    /// How many datagrams were dropped because a process rather than the kernel sent them (a
    /// forged link notification). Readable from any thread.
    package var foreignDatagramCount: Int { counters.foreignDatagrams.load(ordering: .relaxed) }

    /// - Parameters:
    ///   - logger: Receives overrun warnings (once per burst), dump retries and malformed-data notices.
    ///   - networkNamespacePath: Watch another network namespace, such as `/run/netns/NAME`, instead of
    ///     the daemon's own (tests and benchmarks use throw-away namespaces). Needs `CAP_SYS_ADMIN`.
    ///     Wifi and modem detection then relies on netlink alone, since `/sys/class/net` shows only
    ///     the namespace sysfs was mounted in.
    ///   - receiveBufferSize: The socket receive buffer in bytes. Larger rides out longer event storms
    ///     before the kernel drops events; beyond `net.core.rmem_max` it needs `CAP_NET_ADMIN`.
    package init(logger: Logger, networkNamespacePath: String? = nil, receiveBufferSize: Int = 4 << 20) {
        self.logger = logger
        self.networkNamespacePath = networkNamespacePath
        self.receiveBufferSize = receiveBufferSize
    }

    /// Watches until the calling task is cancelled, then returns within milliseconds.
    ///
    /// Throws when the netlink socket cannot be opened or used, or when the kernel keeps refusing dumps.
    package func run(report: @escaping @Sendable (LinkSnapshot) -> Void) async throws {
        let doorbell = try ShutdownDoorbell()
        let reader = NetlinkReader(
            namespacePath: networkNamespacePath,
            receiveBufferSize: receiveBufferSize,
            kindProbe: networkNamespacePath == nil ? .sysfs : .netlinkOnly,
            logger: logger,
            counters: counters,
            doorbell: doorbell,
            report: report
        )
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                do {
                    try DedicatedThread.start(named: "reachd-netlink") {
                        continuation.resume(with: Result { try reader.run() })
                    }
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            doorbell.ring()
        }
    }
}
