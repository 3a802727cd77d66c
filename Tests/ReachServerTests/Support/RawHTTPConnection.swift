import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A bare TCP client with a tiny receive buffer that sends one request and then reads only when
/// told to: the slow or stuck client that must not hold anyone else up.
final class RawHTTPConnection: Sendable {
    private let descriptor: Int32

    /// Connects to localhost (IPv4, then IPv6) on `port`.
    init(port: Int, receiveBuffer: Int32 = 2048) throws {
        var result: Int32 = -1
        for family in [AF_INET, AF_INET6] {
            let fd = socket(family, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { continue }
            var size = receiveBuffer
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            let connected: Int32
            if family == AF_INET {
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = in_port_t(UInt16(port).bigEndian)
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                connected = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
            } else {
                var address = sockaddr_in6()
                address.sin6_family = sa_family_t(AF_INET6)
                address.sin6_port = in_port_t(UInt16(port).bigEndian)
                address.sin6_addr = in6addr_loopback
                connected = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
                }
            }
            if connected == 0 {
                result = fd
                break
            }
            close(fd)
        }
        guard result >= 0 else { throw POSIXError(.ECONNREFUSED) }
        descriptor = result
    }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    /// Reads whatever arrives until `until` holds for everything read so far or `timeout` passes.
    func read(timeout: Duration, until: (String) -> Bool) -> String {
        var timeval = timeval(tv_sec: 0, tv_usec: 50_000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeval, socklen_t(MemoryLayout<timeval>.size))
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while ContinuousClock.now < deadline {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count == 0 { break }
            if count > 0 {
                received.append(contentsOf: buffer[0..<count])
                if until(String(decoding: received, as: UTF8.self)) { break }
            }
        }
        return String(decoding: received, as: UTF8.self)
    }

    deinit { close(descriptor) }
}
