import ReachPOSIX
import ServiceLifecycle

/// A service that listens on an address (the status API, its unix socket, the gRPC health
/// server): the system call error it fails with becomes a ``ListenFailure`` naming the address
/// and the configuration key that set it.
struct Listener<Listening: Service>: Service {
    let address: ListenFailure.Address
    let key: String
    let service: Listening

    func run() async throws {
        do {
            try await service.run()
        } catch let error as SystemCallError {
            throw ListenFailure(address: address, key: key, cause: error)
        }
    }
}
