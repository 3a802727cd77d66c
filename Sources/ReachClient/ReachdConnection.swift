import COpenSSL
import Glibc
import ReachPOSIX
import ReachSupport

/// One connection to reachd's status API on a plain socket (TCP or reachd's unix socket), with TLS
/// from the system's OpenSSL for an `https://` endpoint: blocking calls for one thread, every wait
/// bounded by a timeout and cut short by a doorbell rung from another thread.
///
/// A client makes one request at a time, so it needs no event loop, no HTTP client library and no
/// TLS library of its own (BoringSSL): reachctl, the desktop agent and a program following reachd
/// with ReachKit link none of them (docs/performance.md, "Size").
final class ReachdConnection {
    /// Why the connection failed, for ``ReachdClientError``.
    enum Failure: Error {
        /// No connection could be made: the reason, in words.
        case unreachable(String)
        /// Nothing moved within the limit.
        case silent
        /// TLS failed (the handshake, the certificate, a record): OpenSSL's or the check's words.
        case tls(ClientTLSError)
        /// A read or write failed.
        case broke(SystemCallError)
        /// The doorbell rang.
        case cancelled
    }

    private let descriptor: Int32
    private let tls: ClientTLS?
    private let doorbell: ShutdownDoorbell

    /// Connects to `address` within `connectTimeout`, then (for `https://`) shakes hands within
    /// `silenceLimit`.
    init(
        to address: ReachdEndpoint.Address,
        caFile: String?,
        connectTimeout: Duration,
        silenceLimit: Duration,
        doorbell: ShutdownDoorbell
    ) throws(Failure) {
        self.doorbell = doorbell
        let deadline = ContinuousClock.now.advanced(by: connectTimeout)
        switch address {
        case .unixSocket(let path):
            descriptor = try Self.connectUnix(path, doorbell: doorbell, deadline: deadline)
            tls = nil
        case .tcp(let host, let port, let secure):
            descriptor = try Self.connectTCP(host: host, port: port, doorbell: doorbell, deadline: deadline)
            do {
                tls = secure ? try ClientTLS(descriptor: descriptor, host: host, caFile: caFile) : nil
            } catch {
                Glibc.close(descriptor)
                throw .tls(error)
            }
        }
        if let tls {
            do {
                try tls.handshake { want throws(Failure) in try self.wait(for: want, limit: silenceLimit) }
            } catch {
                Glibc.close(descriptor)
                throw error
            }
        }
    }

    deinit {
        Glibc.close(descriptor)
    }

    /// Writes all of `bytes`, each wait for room at most `limit`.
    func write(_ bytes: [UInt8], limit: Duration) throws(Failure) {
        var sent = 0
        while sent < bytes.count {
            let result = bytes[sent...].withUnsafeBytes { raw in
                tls.map { $0.write(raw) }
                    ?? .done(Glibc.send(descriptor, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL)))
            }
            switch result {
            case .done(let count) where count > 0: sent += count
            case .done: throw .broke(.current("send"))
            case .want(let events): try wait(for: events, limit: limit)
            case .failed(let error): throw .tls(error)
            }
        }
    }

    /// The next bytes, waiting at most `limit` for them; empty at the end of the stream.
    func read(limit: Duration) throws(Failure) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let result = buffer.withUnsafeMutableBytes { raw in
                tls.map { $0.read(raw) } ?? .done(Glibc.recv(descriptor, raw.baseAddress, raw.count, 0))
            }
            switch result {
            case .done(let count) where count >= 0: return Array(buffer.prefix(count))
            case .done where errno == EAGAIN || errno == EINTR: try wait(for: Int16(POLLIN), limit: limit)
            case .done where errno == ECONNRESET: return []
            case .done: throw .broke(.current("recv"))
            case .want(let events): try wait(for: events, limit: limit)
            case .failed(let error): throw .tls(error)
            }
        }
    }

    /// Waits until the socket is ready for `events`, at most `limit`.
    private func wait(for events: Int16, limit: Duration) throws(Failure) {
        try Self.wait(descriptor, events, doorbell: doorbell, deadline: ContinuousClock.now.advanced(by: limit))
    }

    private static func wait(
        _ descriptor: Int32,
        _ events: Int16,
        doorbell: ShutdownDoorbell,
        deadline: ContinuousClock.Instant
    ) throws(Failure) {
        while true {
            var descriptors = [
                pollfd(fd: descriptor, events: events, revents: 0),
                pollfd(fd: doorbell.descriptor, events: Int16(POLLIN), revents: 0),
            ]
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { throw .silent }
            let milliseconds = Int32(min(Double(Int32.max), (left / .milliseconds(1)).rounded(.up)))
            let ready = poll(&descriptors, 2, max(1, milliseconds))
            if ready < 0, errno == EINTR { continue }
            guard ready >= 0 else { throw .broke(.current("poll")) }
            if descriptors[1].revents != 0 { throw .cancelled }
            if descriptors[0].revents != 0 { return }
        }
    }

    private static func connectUnix(
        _ path: String,
        doorbell: ShutdownDoorbell,
        deadline: ContinuousClock.Instant
    ) throws(Failure) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw .unreachable(SystemCallError.reason(ENAMETOOLONG))
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: bytes) }
        return try withUnsafeBytes(of: &address) { raw throws(Failure) in
            try connect(
                family: AF_UNIX,
                raw.baseAddress!.assumingMemoryBound(to: sockaddr.self),
                socklen_t(MemoryLayout<sockaddr_un>.size),
                doorbell: doorbell,
                deadline: deadline
            )
        }
    }

    /// Tries each of the host's addresses in turn, as `getaddrinfo` orders them; the first
    /// failure says why none worked.
    private static func connectTCP(
        host: String,
        port: Int,
        doorbell: ShutdownDoorbell,
        deadline: ContinuousClock.Instant
    ) throws(Failure) -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = IPAddress(host) != nil ? AI_NUMERICHOST : 0
        var found: UnsafeMutablePointer<addrinfo>?
        let code = getaddrinfo(host, String(port), &hints, &found)
        guard code == 0, let found else {
            throw .unreachable("cannot resolve \(host): \(String(cString: gai_strerror(code)).lowercased())")
        }
        defer { freeaddrinfo(found) }
        var first: Failure?
        var next: UnsafeMutablePointer<addrinfo>? = found
        while let candidate = next {
            next = candidate.pointee.ai_next
            do {
                return try connect(
                    family: candidate.pointee.ai_family,
                    candidate.pointee.ai_addr,
                    candidate.pointee.ai_addrlen,
                    doorbell: doorbell,
                    deadline: deadline
                )
            } catch .cancelled {
                throw .cancelled
            } catch {
                if first == nil { first = error }
            }
        }
        throw first ?? .unreachable("no address to connect to")
    }

    private static func connect(
        family: Int32,
        _ address: UnsafePointer<sockaddr>,
        _ length: socklen_t,
        doorbell: ShutdownDoorbell,
        deadline: ContinuousClock.Instant
    ) throws(Failure) -> Int32 {
        let descriptor = socket(
            family,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue),
            0
        )
        guard descriptor >= 0 else { throw .unreachable(SystemCallError.reason(errno)) }
        if Glibc.connect(descriptor, address, length) != 0 {
            guard errno == EINPROGRESS || errno == EAGAIN else {
                let error = errno
                Glibc.close(descriptor)
                throw .unreachable(SystemCallError.reason(error))
            }
            do {
                try wait(descriptor, Int16(POLLOUT), doorbell: doorbell, deadline: deadline)
            } catch .silent {
                Glibc.close(descriptor)
                throw .unreachable("connect timed out")
            } catch {
                Glibc.close(descriptor)
                throw error
            }
            var error: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &size)
            guard error == 0 else {
                Glibc.close(descriptor)
                throw .unreachable(SystemCallError.reason(error))
            }
        }
        return descriptor
    }
}

/// What a non-blocking read or write did: bytes moved (or -1 with `errno`), a wait for the socket
/// to be readable or writable, or a TLS failure.
enum SocketResult {
    case done(Int)
    case want(Int16)
    case failed(ClientTLSError)
}
