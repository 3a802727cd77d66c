import ReachSupport

extension LinkSnapshot {
    /// The default gateway on the path from `source` (an address of this machine, the one the
    /// kernel picks for the traffic): the interface holding it and that interface's default
    /// route's gateway of the same family. `nil` when no interface holds it or its default route
    /// has no gateway (a point-to-point link).
    package func defaultGateway(from source: IPAddress) -> (interface: InterfaceFacts, gateway: IPAddress)? {
        for interface in interfaces where interface.addresses.contains(where: { $0.prefix.address == source }) {
            let gateway = interface.routes.first {
                $0.destination.isDefault && $0.destination.family == source.family && $0.gateway != nil
            }?.gateway
            return gateway.map { (interface, $0) }
        }
        return nil
    }
}
