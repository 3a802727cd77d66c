import ReachCore
import ReachPOSIX
import ReachSupport

#if canImport(Glibc)
import Glibc
#endif

/// An address reachd could not listen on, said as a person needs it when reachd will not start:
/// the address, the system's reason, and what to check, naming the configuration key that set it.
///
/// `cannot listen on 127.0.0.1:9780: address already in use (is another reachd running? see "listen")`
package struct ListenFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where reachd tried to listen.
    package enum Address: Sendable, Hashable, CustomStringConvertible {
        case tcp(HostPort)
        case unixSocket(path: String)

        package var description: String {
            switch self {
            case .tcp(let address): address.description
            case .unixSocket(let path): path
            }
        }
    }

    package let address: Address
    /// The configuration key that names the address: `listen`, `socket` or `grpc_health.listen`.
    package let key: String
    /// The failed call (`bind`) and its errno.
    package let cause: SystemCallError

    package init(address: Address, key: String, cause: SystemCallError) {
        self.address = address
        self.key = key
        self.cause = cause
    }

    package var description: String {
        "cannot listen on \(address): \(cause.reason) (\(hint))"
    }

    /// What to check for this errno at this kind of address; always ends by naming the key.
    var hint: String {
        let see = "see \"\(key)\""
        switch address {
        case .tcp(let address):
            switch cause.code {
            case EADDRINUSE: return "is another reachd running? \(see)"
            case EACCES, EPERM:
                return address.port < 1024 ? "ports below 1024 need the CAP_NET_BIND_SERVICE capability; \(see)" : see
            case EADDRNOTAVAIL: return "\(address.host) is not an address of this machine; \(see)"
            case EAFNOSUPPORT:
                return "this machine does not have \(address.host.contains(":") ? "IPv6" : "IPv4") enabled; \(see)"
            default: return see
            }
        case .unixSocket(let path):
            let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(
                separator: "/"
            )
            let folder = directory.isEmpty ? (path.hasPrefix("/") ? "/" : ".") : directory
            switch cause.code {
            case EADDRINUSE: return "is another reachd running? \(see)"
            case ENOENT, ENOTDIR: return "the directory \(folder) does not exist; \(see)"
            case EACCES, EPERM, EROFS: return "reachd may not create files in \(folder); \(see)"
            case ENAMETOOLONG: return "a unix socket's path has at most 107 bytes; \(see)"
            case ENOTSOCK: return "a file that is not a socket is in the way; \(see)"
            default: return see
            }
        }
    }
}
