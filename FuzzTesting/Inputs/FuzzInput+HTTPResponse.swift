import NIOCore
import NIOEmbedded
import ReachCore
import ReachProbes
import ReachSupport
import Synchronization

extension FuzzInput {
    /// A health endpoint's answer, through the HTTP prober's own pipeline
    /// (`HTTPProber.exchange(_:over:whenDone:)`: its exchange handler, the answer reader in it,
    /// then its judging) on an `EmbeddedChannel`, as swift-nio's own fuzzer drives its HTTP parser.
    ///
    /// The first byte picks what the check expects (any 2xx, a body substring, a JSON pointer, a
    /// set of statuses) and how the rest is cut into reads; the rest is what the server sent, then
    /// it closes. Whatever it sent, the probe settles exactly once, with a result for its target.
    package static func httpResponse(_ bytes: [UInt8]) {
        guard let first = bytes.first else { return }
        let expectations = [
            HTTPExpectation(),
            HTTPExpectation(bodyContains: "\"ok\""),
            HTTPExpectation(json: JSONExpectation(pointer: "/status", equals: .string("ok"))),
            HTTPExpectation(statuses: [200...200, 204...204, 300...399]),
        ]
        let check = HTTPCheck(
            url: "http://192.0.2.7:8080/health",
            endpoint: HostPort(host: "192.0.2.7", port: 8080),
            expectation: expectations[Int(first % 4)]
        )
        let target = ProbeTarget(name: "fuzz", check: .http(check))
        let results = Mutex<[ProbeResult]>([])
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        do {
            try channel.connect(to: SocketAddress(ipAddress: "192.0.2.7", port: 8080)).wait()
            try HTTPProber.exchange(target, over: channel) { result in results.withLock { $0.append(result) } }
        } catch {
            preconditionFailure("fuzz invariant broken: the probe's pipeline cannot be set up: \(error)")
        }
        // The request went out first: what the server answers comes after it.
        while (try? channel.readOutbound(as: ByteBuffer.self)) ?? nil != nil {}
        let answer = bytes.dropFirst()
        let chunk = Int(first / 4) % 32 + 1
        var start = answer.startIndex
        while start < answer.endIndex, channel.isActive {
            let end = answer.index(start, offsetBy: min(chunk * 64, answer.endIndex - start))
            _ = try? channel.writeInbound(ByteBuffer(bytes: answer[start..<end]))
            start = end
        }
        if channel.isActive { _ = try? channel.close().wait() }
        channel.embeddedEventLoop.run()
        let settled = results.withLock { $0 }
        require(settled.count == 1, "the probe settled \(settled.count) times")
        require(settled.first?.target == "fuzz", "a result for another target")
    }
}
