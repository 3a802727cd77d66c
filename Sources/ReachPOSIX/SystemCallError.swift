#if canImport(Glibc)
import Glibc
#endif

/// A failed system call and its errno: the one error every adapter reports a system call's failure with.
package struct SystemCallError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The call that failed (`socket`, `bind`, `sd_bus_open_user`).
    package let call: String
    /// Its errno (positive).
    package let code: Int32

    /// The failure of `call` with errno `code`.
    package init(_ call: String, code: Int32) {
        self.call = call
        self.code = code
    }

    /// The failure of `call` with the calling thread's `errno`, read now.
    package static func current(_ call: String) -> SystemCallError {
        SystemCallError(call, code: errno)
    }

    /// The errno in words a person reads ("connection refused", "no such file"), without the call.
    package var reason: String { Self.reason(code) }

    package var description: String { "\(call) failed: \(reason) (errno \(code))" }

    /// An errno in words: the common ones as people say them, the rest as the C library does.
    package static func reason(_ code: Int32) -> String {
        switch code {
        case ENOENT, ENOTDIR: "no such file"
        case EISDIR: "it is a directory"
        case EACCES, EPERM: "permission denied"
        case ECONNREFUSED: "connection refused"
        case ECONNRESET, EPIPE: "the connection was closed"
        case ECONNABORTED: "the connection was aborted"
        case EADDRINUSE: "address already in use"
        case EADDRNOTAVAIL: "address not available on this machine"
        case EAFNOSUPPORT: "address family not supported"
        case ETIMEDOUT: "timed out"
        case ENETUNREACH: "the network is unreachable"
        case EHOSTUNREACH: "no route to the host"
        case ENETDOWN: "the network is down"
        case ENAMETOOLONG: "the path is too long"
        case ENOTSOCK: "not a socket"
        default: String(cString: strerror(code)).lowercased()
        }
    }
}
