import Foundation
import ReachTesting

/// A plain HTTP/1.0 GET to 127.0.0.1 over a raw socket (Foundation on Linux has no http client
/// without FoundationNetworking): the status code and the body, de-chunked if need be.
/// Throws when nothing listens on `port` or the answer is not HTTP. The blocking socket calls run
/// off the cooperative pool.
package func loopbackGet(
    port: Int,
    path: String,
    timeout: Duration = .seconds(10)
) async throws -> (status: Int, body: String) {
    try await offPool { try blockingGet(port: port, path: path, timeout: timeout) }
}

private func blockingGet(port: Int, path: String, timeout: Duration) throws -> (status: Int, body: String) {
    let fd = try connectLoopback(port: port)
    defer { close(fd) }
    var wait = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: 0)
    _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
    _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
    let request = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n".utf8)
    _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    var response: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 16384)
    while true {
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count <= 0 { break }
        response += buffer[0..<count]
    }
    let text = String(decoding: response, as: UTF8.self)
    guard let split = text.range(of: "\r\n\r\n") else { throw POSIXError(.EPROTO) }
    let head = text[..<split.lowerBound]
    let statusLine = head.prefix { $0 != "\r" }.split(separator: " ")
    guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/"), let status = Int(statusLine[1]) else {
        throw POSIXError(.EPROTO)
    }
    var body = String(text[split.upperBound...])
    if head.lowercased().contains("transfer-encoding: chunked") { body = dechunk(body) }
    return (status, body)
}

/// Joins the chunks of a `Transfer-Encoding: chunked` body.
private func dechunk(_ body: String) -> String {
    var rest = Substring(body)
    var joined = ""
    while let lineEnd = rest.range(of: "\r\n") {
        let size = Int(rest[..<lineEnd.lowerBound].prefix { $0 != ";" }, radix: 16) ?? 0
        if size == 0 { break }
        let utf8 = rest[lineEnd.upperBound...].utf8
        let end = utf8.index(utf8.startIndex, offsetBy: size, limitedBy: utf8.endIndex) ?? utf8.endIndex
        joined += String(decoding: utf8[utf8.startIndex..<end], as: UTF8.self)
        rest = Substring(String(decoding: utf8[end...], as: UTF8.self)).dropFirst(2)
    }
    return joined
}

/// A TCP socket connected to 127.0.0.1:`port`, to be closed by the caller.
package func connectLoopback(port: Int, receiveBuffer: Int32? = nil) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw POSIXError(.EMFILE) }
    if var size = receiveBuffer {
        // Before the connect, so that the window the peer is offered is this small too.
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard connected == 0 else {
        close(fd)
        throw POSIXError(.ECONNREFUSED)
    }
    return fd
}

/// A loopback TCP port that was free a moment ago (bound to port 0, then released).
package func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw POSIXError(.EMFILE) }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard named == 0 else { throw POSIXError(.EADDRNOTAVAIL) }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// `text` percent-encoded for a URL query value (everything but unreserved characters).
package func percentEncodedQueryValue(_ text: String) -> String {
    let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
    return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
}
