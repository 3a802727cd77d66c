import ReachCore
import ReachSupport

extension InterfaceFacts {
    /// An Ethernet interface with carrier, a global IPv4 address and a default route: usable.
    package static func usable(
        _ name: String = "eth0",
        index: Int = 2,
        address: String = "192.168.1.10/24",
        gateway: String = "192.168.1.1"
    ) -> InterfaceFacts {
        let prefix = IPPrefix(address)!
        return InterfaceFacts(
            index: index,
            name: name,
            kind: .ethernet,
            isAdminUp: true,
            isLowerUp: true,
            operState: .up,
            addresses: [InterfaceAddress(prefix: prefix, scope: .global)],
            routes: [
                Route(destination: IPPrefix(address: prefix.address.masked(to: prefix.length), length: prefix.length)!),
                Route(
                    destination: IPPrefix(prefix.family == .ipv4 ? "0.0.0.0/0" : "::/0")!,
                    gateway: IPAddress(gateway)
                ),
            ]
        )
    }

    /// ``usable(_:index:address:gateway:)`` with a global IPv6 address and an IPv6 default route
    /// too: a host that can use both families.
    package var dualStack: InterfaceFacts {
        with {
            $0.addresses.append(InterfaceAddress(prefix: IPPrefix("2001:db8::10/64")!, scope: .global))
            $0.routes.append(Route(destination: IPPrefix("::/0")!, gateway: IPAddress("fe80::1")))
        }
    }

    /// The loopback interface as the kernel reports it.
    package static let loopback = InterfaceFacts(
        index: 1,
        name: "lo",
        kind: .loopback,
        isAdminUp: true,
        isLowerUp: true,
        operState: .unknown,
        addresses: [InterfaceAddress(prefix: IPPrefix("127.0.0.1/8")!, scope: .host)],
        routes: []
    )

    package func with(_ change: (inout InterfaceFacts) -> Void) -> InterfaceFacts {
        var copy = self
        change(&copy)
        return copy
    }

    /// The interface after its carrier went away (cable pulled, peer down).
    package var withoutCarrier: InterfaceFacts {
        with {
            $0.isLowerUp = false
            $0.operState = .lowerLayerDown
            $0.routes.removeAll()
        }
    }

    package var withoutDefaultRoute: InterfaceFacts { with { $0.routes.removeAll(where: \.destination.isDefault) } }
    package var withoutAddresses: InterfaceFacts { with { $0.addresses.removeAll() } }
}

extension IPAddress {
    /// The network part of the address.
    package func masked(to length: Int) -> IPAddress {
        let hostBits = bitWidth - length
        let mask: UInt128 = hostBits >= 128 ? 0 : ~UInt128(0) << hostBits
        return IPAddress(family: family, value: value & mask)
    }
}

extension LinkSnapshot {
    package static func of(_ interfaces: InterfaceFacts...) -> LinkSnapshot {
        LinkSnapshot(interfaces: [.loopback] + interfaces)
    }

    /// Only loopback: no usable link.
    package static let offline = LinkSnapshot(interfaces: [.loopback])
}

extension ProbeTarget {
    /// An HTTP target on a non-loopback address, so the link gates it.
    package static func http(
        _ name: String,
        host: String = "203.0.113.10",
        hysteresis: Hysteresis = Hysteresis()
    ) -> ProbeTarget {
        ProbeTarget(
            name: name,
            check: .http(HTTPCheck(url: "http://\(host)/api/v1/health", endpoint: HostPort(host: host, port: 80))),
            hysteresis: hysteresis
        )
    }
}

extension ProbeResult {
    package static func ok(_ target: String, ms: Int = 5) -> ProbeResult {
        .success(target, latency: .milliseconds(ms))
    }

    package static func refused(_ target: String) -> ProbeResult {
        .failure(target, .connectionRefused, phase: .connect, latency: .milliseconds(1))
    }
}

/// The value of the sample `series` (name and labels exactly as exposed) in a scrape, if present.
package func sample(_ exposition: String, _ series: String) -> Double? {
    for line in exposition.split(separator: "\n") where !line.hasPrefix("#") {
        guard line.hasPrefix(series + " ") else { continue }
        return Double(line.dropFirst(series.count + 1))
    }
    return nil
}
