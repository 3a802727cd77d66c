import ReachCore
import ReachSupport
import Synchronization

/// Probes an `icmp` target: a burst of ``ReachCore/ICMPCheck/packets`` echoes spread over the
/// interval (``ReachCore/ICMPCheck/spacing(interval:timeout:)``), sent and heard by the shared
/// ``EchoLoop``. Up when one echo of the burst comes back within the timeout; the result carries
/// the burst's ``ReachCore/EchoStatistics``, and its latency is the median round trip.
///
/// A name is resolved at each probe, in the target's address family (NIO's thread pool runs
/// `getaddrinfo`), and the probe's deadline counts from before it.
package struct ICMPBurstProber: StartingProber {
    private let loop: EchoLoop

    package init(loop: EchoLoop = EchoLoop()) {
        self.loop = loop
    }

    package func start(_ target: ProbeTarget, whenDone: @escaping @Sendable (ProbeResult) -> Void) -> ProbeCancellation
    {
        guard case .icmp(let check) = target.check else {
            whenDone(.failure(target.name, .protocolError, detail: "not an icmp target", latency: .zero))
            return .none
        }
        let spacing = check.spacing(interval: target.interval, timeout: target.timeout)
        if let address = IPAddress(check.host) {
            if let family = target.addressFamily.only, family != address.family {
                let detail =
                    "the target is limited to \(family.rawValue), and \(check.host) is not an \(family.rawValue) address"
                whenDone(.failure(target.name, .networkUnreachable, detail: detail, latency: .zero))
                return .none
            }
            return loop.start(
                target: target.name,
                address: address,
                count: check.packets,
                spacing: spacing,
                timeout: target.timeout,
                whenDone: whenDone
            )
        }
        let started = ContinuousClock.now
        loop.startThread()
        let burst = Mutex<(cancellation: ProbeCancellation?, cancelled: Bool)>((nil, false))
        let resolving = Task {
            let address: IPAddress
            do {
                let found = try await GRPCAddressResolver.resolve(host: check.host, family: target.addressFamily)
                guard let first = found.lazy.compactMap({ IPAddress($0) }).first else { throw CancellationError() }
                address = first
            } catch let error as GRPCResolutionError {
                return whenDone(
                    ProbeResult(
                        target: target.name,
                        failure: SocketFailure.unresolved(check.host, error.message),
                        timings: ProbeTimings(total: started.duration(to: .now))
                    )
                )
            } catch {
                return whenDone(.failure(target.name, .cancelled, latency: started.duration(to: .now)))
            }
            let left = target.timeout - started.duration(to: .now)
            let cancellation = loop.start(
                target: target.name,
                address: address,
                count: check.packets,
                spacing: spacing,
                timeout: max(left, .zero),
                whenDone: whenDone
            )
            let cancelled = burst.withLock { state in
                state.cancellation = cancellation
                return state.cancelled
            }
            if cancelled { cancellation.cancel() }
        }
        return ProbeCancellation {
            resolving.cancel()
            burst.withLock { state in
                state.cancelled = true
                return state.cancellation
            }?.cancel()
        }
    }

    /// Ends the echo thread and every burst in flight.
    package func shutdown() {
        loop.shutdown()
    }
}

extension AddressFamily {
    /// The one family a target is limited to; `nil` for `auto`.
    fileprivate var only: IPFamily? {
        switch self {
        case .auto: nil
        case .ipv4: .ipv4
        case .ipv6: .ipv6
        }
    }
}
