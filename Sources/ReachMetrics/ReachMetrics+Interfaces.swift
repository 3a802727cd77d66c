import Prometheus
import ReachCore
import Synchronization

/// `reachd_interface_reachable{interface}`: 1 when the targets answer out of the uplink alone, 0
/// when they do not, for each uplink probed on its own (`probe.per_interface`). An uplink whose
/// reachability is unknown (not yet probed, a kernel that refuses `SO_BINDTODEVICE`) has no
/// series, and the series of an uplink that is gone goes with it: labels stay bounded by the
/// uplinks the host has.
final class InterfaceSeries: Sendable {
    private let gauges = Mutex<[String: Gauge]>([:])

    func record(_ interfaces: [InterfaceReachability], in registry: PrometheusCollectorRegistry) {
        gauges.withLock { gauges in
            let known = Dictionary(
                interfaces.compactMap { uplink in uplink.reachable.map { (uplink.name, $0) } },
                uniquingKeysWith: { first, _ in first }
            )
            for (name, gauge) in gauges where known[name] == nil {
                registry.unregisterGauge(gauge)
                gauges[name] = nil
            }
            for (name, reachable) in known {
                let gauge =
                    gauges[name]
                    ?? registry.makeGauge(
                        descriptor: ReachMetrics.interfaceReachableName,
                        labels: [("interface", name)]
                    )
                gauge.set(to: reachable ? 1 : 0)
                gauges[name] = gauge
            }
        }
    }
}
