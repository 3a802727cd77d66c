import Foundation
import Hummingbird
import HummingbirdTesting
import ReachCore
import ReachMetrics
import ReachServer
import ReachTestRigs
import ReachTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Malformed requests, huge headers, lying bodies and piles of idle connections, against a live
/// server over raw sockets: each gets a clear 4xx or a closed connection, memory stays bounded,
/// and the server keeps answering everyone else.
@Suite("Status API: robustness", .serialized)
struct RobustnessTests {
    private func withLiveServer(
        limits: StatusServer.Limits = StatusServer.Limits(),
        _ body: @Sendable (Int) async throws -> Void
    ) async throws {
        signal(SIGPIPE, SIG_IGN)
        let harness = MonitorHarness()
        harness.connect()
        let server = StatusServer(
            monitor: harness.monitor,
            metrics: ReachMetrics(targets: harness.targets),
            address: .tcp(host: "127.0.0.1", port: 0),
            limits: limits,
            logger: .quiet
        )
        try await server.makeApplication().test(.live) { client in
            let port = try #require(client.port)
            try await body(port)
            // Whatever came before, the server still answers, on a fresh connection (the test
            // client's own may have timed out).
            let after = try RawSocket(port: port)
            await after.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            let (text, _) = await after.readUntilClosed(timeout: .seconds(5))
            #expect(statusLine(text) == "HTTP/1.1 200 OK")
            #expect(text.hasSuffix(#"{"status":"ok"}"#))
        }
        await harness.stop()
    }

    private func statusLine(_ text: String) -> String {
        // "\r\n" is one Character: split the scalars.
        String(String.UnicodeScalarView(text.unicodeScalars.prefix { $0 != "\r" && $0 != "\n" }))
    }

    @Test func aMegabyteOfHeadersGets400AndAClosedConnection() async throws {
        try await withLiveServer { port in
            let socket = try RawSocket(port: port)
            var request = "GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            let field = "X-Padding: " + String(repeating: "a", count: 1000) + "\r\n"
            for _ in 0..<1024 { request += field }
            request += "\r\n"
            // Loopback socket buffers may take the whole megabyte; the server reads only up to its limit.
            await socket.send(Array(request.utf8))
            let (text, closed) = await socket.readUntilClosed(timeout: .seconds(5))
            #expect(closed)
            // The 400 may be lost to a reset when the client is still writing; if it arrives, it is a 400.
            #expect(text.isEmpty || statusLine(text) == "HTTP/1.1 400 Bad Request", "\(statusLine(text))")
        }
    }

    /// Run as the daemon runs it, not under HummingbirdTesting: its live mode rebuilds the
    /// configuration without the connection limit.
    ///
    /// Every wait but the one for "no answer yet" is for an answer that comes, and its deadline
    /// only catches one that never does. The server runs in the test process, so an answer takes
    /// as long as that process and the machine let it: milliseconds alone, 1.2 s a round trip
    /// beside the parallel suite at load 40, and about 5 s in the run that failed (50.7 s for the
    /// test's ten round trips), when 5 s was the deadline.
    @Test func pastTheConnectionLimitANewClientWaitsUntilOneCloses() async throws {
        let answerDeadline = Duration.seconds(30)
        let harness = MonitorHarness()
        harness.connect()
        let port = try freeLoopbackPort()
        let server = StatusServer(
            monitor: harness.monitor,
            metrics: ReachMetrics(targets: harness.targets),
            address: .tcp(host: "127.0.0.1", port: port),
            limits: StatusServer.Limits(maxConnections: 4),
            logger: .quiet
        )
        let running = Task { try await server.makeApplication().run() }
        defer { running.cancel() }
        var held: [RawSocket] = []
        try await waitUntil("the server listens") { (try? RawSocket(port: port)).map { held.append($0) } != nil }
        for _ in 1..<4 { held.append(try RawSocket(port: port)) }
        func eachHeldConnectionAnswers() async {
            for socket in held {
                await socket.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                #expect(
                    await socket.read(until: #"{"status":"ok"}"#, timeout: answerDeadline)
                        .hasSuffix(#"{"status":"ok"}"#)
                )
            }
        }
        // A request answered on each held connection (kept alive) shows the server accepted and
        // counted all four: only then does the next one have to wait.
        await eachHeldConnectionAnswers()
        let waiting = try RawSocket(port: port)
        await waiting.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        // The four are served after the fifth asked: the server is answering, just not the fifth.
        await eachHeldConnectionAnswers()
        let answeredEarly = await offPool { waiting.isReadable(timeoutMilliseconds: 1000) }
        #expect(!answeredEarly, "no answer while four connections are open")
        held.removeFirst().closeNow()
        let closed = ContinuousClock.now
        let (text, closedByServer) = await waiting.readUntilClosed(timeout: answerDeadline)
        #expect(
            statusLine(text) == "HTTP/1.1 200 OK",
            "answered once one closed (after \(ContinuousClock.now - closed), closed by the server: \(closedByServer))"
        )
        held.removeAll()
        await harness.stop()
    }

    @Test func oneHugeHeaderFieldGets400() async throws {
        try await withLiveServer { port in
            let socket = try RawSocket(port: port)
            await socket.send(
                "GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: \(String(repeating: "b", count: 20 * 1024))\r\n\r\n"
            )
            let (text, closed) = await socket.readUntilClosed(timeout: .seconds(5))
            #expect(statusLine(text) == "HTTP/1.1 400 Bad Request")
            #expect(closed)
        }
    }

    @Test func tooManyHeaderFieldsGet400() async throws {
        try await withLiveServer { port in
            let socket = try RawSocket(port: port)
            let fields = (0..<200).map { "X-F\($0): v\r\n" }.joined()
            await socket.send("GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\(fields)\r\n")
            let (text, closed) = await socket.readUntilClosed(timeout: .seconds(5))
            #expect(statusLine(text) == "HTTP/1.1 400 Bad Request")
            #expect(closed)
        }
    }

    @Test(arguments: [
        "GARBAGE\r\n\r\n",
        "GET /v1/status HTTP/9.9.9\r\n\r\n",
        "GET  HTTP/1.1\r\nHost: x\r\n\r\n",
        "\u{01}\u{02}\u{03} / HTTP/1.1\r\n\r\n",
        "GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header Without Colon\r\n\r\n",
    ])
    func aMalformedRequestGets400AndAClosedConnection(_ request: String) async throws {
        try await withLiveServer { port in
            let socket = try RawSocket(port: port)
            await socket.send(request)
            let (text, closed) = await socket.readUntilClosed(timeout: .seconds(5))
            #expect(statusLine(text) == "HTTP/1.1 400 Bad Request", "\(request.debugDescription)")
            #expect(closed)
        }
    }

    @Test func anAbsurdContentLengthOnCheckGets413AndNoBodyIsAwaited() async throws {
        try await withLiveServer(limits: StatusServer.Limits(idleTimeout: .seconds(1))) { port in
            let socket = try RawSocket(port: port)
            await socket.send("POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000000000\r\n\r\n")
            let (text, closed) = await socket.readUntilClosed(timeout: .seconds(5))
            // NIO still calls 413 by its RFC 7231 name, "Payload Too Large".
            #expect(statusLine(text).hasPrefix("HTTP/1.1 413 "))
            #expect(text.lowercased().contains("connection: close"))
            #expect(text.contains(#"{"error":"#))
            // The client never sends the body it announced: the idle timeout ends the connection.
            #expect(closed)
        }
    }

    /// A client that sends its whole oversized body without waiting still reads the 413: the server
    /// shuts its side first and discards the rest for a moment, instead of resetting the connection.
    @Test(arguments: ["POST /v1/check", "GET /v1/status", "GET /v1/events", "GET /metrics", "GET /healthz"])
    func aLargeBodySentAtOnceStillGets413(_ request: String) async throws {
        try await withLiveServer { port in
            let socket = try RawSocket(port: port)
            let body = 2 << 20
            let chunk = [UInt8](repeating: UInt8(ascii: "z"), count: 64 * 1024)
            await socket.send("\(request) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body)\r\n\r\n")
            var total = 0
            while total < body {
                let sent = await socket.send(chunk)
                total += sent
                if sent < chunk.count { break }
            }
            let (text, closed) = await socket.readUntilClosed(timeout: .seconds(5))
            #expect(statusLine(text).hasPrefix("HTTP/1.1 413 "), "\(request): \(text.prefix(200).debugDescription)")
            #expect(closed)
        }
    }

    @Test func anOverflowingContentLengthGets400() async throws {
        try await withLiveServer { port in
            let socket = try RawSocket(port: port)
            await socket.send(
                "POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 99999999999999999999999\r\n\r\n"
            )
            let (text, closed) = await socket.readUntilClosed(timeout: .seconds(5))
            #expect(statusLine(text) == "HTTP/1.1 400 Bad Request")
            #expect(closed)
        }
    }

    @Test func aChunkedBodyPastTheLimitClosesTheConnection() async throws {
        try await withLiveServer(limits: StatusServer.Limits(maxBodyBytes: 1024)) { port in
            let socket = try RawSocket(port: port)
            await socket.send("POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n")
            let chunk = Array("4000\r\n\(String(repeating: "z", count: 0x4000))\r\n".utf8)
            var total = 0
            for _ in 0..<256 where total < 4 << 20 {
                let sent = await socket.send(chunk)
                total += sent
                if sent < chunk.count { break }
            }
            #expect(total < 4 << 20, "the server kept reading a body it does not want")
            #expect(await socket.isClosedByServer(within: .seconds(5)))
        }
    }

    @Test func idleConnectionsAreClosedAfterTheIdleTimeout() async throws {
        try await withLiveServer(limits: StatusServer.Limits(idleTimeout: .seconds(1))) { port in
            // One that never sends a byte, one that stalls mid-header, one idle after a request.
            let silent = try RawSocket(port: port)
            let stalled = try RawSocket(port: port)
            await stalled.send("GET /v1/status HTTP/1.1\r\nHost: 12")
            let kept = try RawSocket(port: port)
            await kept.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let start = ContinuousClock.now
            #expect(await silent.isClosedByServer(within: .seconds(5)))
            #expect(await stalled.isClosedByServer(within: .seconds(5)))
            let (text, closed) = await kept.readUntilClosed(timeout: .seconds(5))
            #expect(statusLine(text) == "HTTP/1.1 200 OK")
            #expect(closed)
            #expect(ContinuousClock.now - start >= .milliseconds(900))
        }
    }

    @Test func anEventStreamIsNotIdle() async throws {
        try await withLiveServer(limits: StatusServer.Limits(idleTimeout: .milliseconds(500))) { port in
            let socket = try RawSocket(port: port)
            await socket.send("GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let (text, closed) = await socket.readUntilClosed(timeout: .seconds(2))
            #expect(statusLine(text) == "HTTP/1.1 200 OK")
            #expect(text.contains("event: verdict"))
            #expect(!closed, "the idle timeout must not cut a response in progress")
        }
    }
}

@Suite("Status API: Unix socket")
struct UnixSocketTests {
    @Test func theServerAnswersOverAUnixSocketWithMode0660() async throws {
        let directory = try TemporaryDirectory("sock")
        let path = "\(directory)/status.sock"
        let harness = MonitorHarness()
        harness.connect()
        let app = harness.server(address: .unixSocket(path)).makeApplication()
        let running = Task { try await app.run() }
        defer { running.cancel() }
        var answer = ""
        var mode: mode_t = 0
        try? await waitUntil("an answer on the socket, once its mode is 0660") {
            var info = stat()
            guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK, info.st_mode & 0o777 == 0o660 else {
                return false
            }
            mode = info.st_mode & 0o777
            answer = await offPool {
                Self.request(path: path, "GET /v1/status HTTP/1.1\r\nHost: reachd\r\nConnection: close\r\n\r\n")
            }
            return !answer.isEmpty
        }
        #expect(mode == 0o660, "socket mode \(String(mode, radix: 8))")
        #expect(answer.hasPrefix("HTTP/1.1 200 OK"))
        #expect(answer.contains(#""state":"connected""#))
        running.cancel()
        _ = await running.result
        await harness.stop()
    }

    /// One request over AF_UNIX; everything the server answers before it closes.
    static func request(path: String, _ text: String) -> String {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else { return "" }
        let request = Array(text.utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            received.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: received, as: UTF8.self)
    }
}
