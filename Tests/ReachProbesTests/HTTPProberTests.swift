import Foundation
import Logging
import ReachCore
import ReachProbes
import ReachSupport
import ReachTestRigs
import Testing

/// The HTTP prober against real servers on 127.0.0.1 that answer well, badly, slowly or not at all.
@Suite("HTTP probe against real servers", .serialized)
final class HTTPProberTests {
    let server: HTTPTargetServer
    let prober = HTTPProber(logger: Logger(label: "test"))

    init() async throws {
        server = try await HTTPTargetServer()
    }

    deinit {
        server.stop()
    }

    func target(
        _ url: String,
        timeout: Duration = .seconds(2),
        expect: HTTPExpectation = HTTPExpectation(),
        headers: [HTTPHeaderField] = [],
        token: Secret? = nil,
        tls: TLSSettings = TLSSettings(),
        family: AddressFamily = .auto
    ) -> ProbeTarget {
        let authority = url.split(separator: "/")[1].split(separator: ":")
        let check = HTTPCheck(
            url: url,
            endpoint: HostPort(host: String(authority[0]), port: Int(authority[1]) ?? 80),
            expectation: expect,
            headers: headers,
            bearerToken: token,
            tls: tls
        )
        return ProbeTarget(name: "server", check: .http(check), timeout: timeout, addressFamily: family)
    }

    func probe(_ target: ProbeTarget) async -> ProbeResult {
        let result = await prober.probe(target)
        print(
            "\(target.name) \(target.kind): \(result.failure.map { "\($0.reason) in \($0.phase?.rawValue ?? "-"): \($0.detail ?? "")" } ?? "ok") after \(result.latency)"
        )
        expectOurWords(result.failure)
        return result
    }

    @Test func aHealthyEndpointPassesWithItsTimings() async {
        // A deadline no loaded machine reaches on loopback, so that the test pins the timings, not the load.
        let result = await probe(target(server.url("/ok"), timeout: .seconds(10)))
        #expect(result.isSuccess)
        #expect(result.timings.firstByte != nil)
        #expect(result.timings.connect != nil)
        #expect(result.latency < .seconds(10), "inside the deadline")
        await prober.shutdown()
    }

    @Test func aStatusOutsideTheExpectedSetFailsWithThatStatus() async {
        let result = await probe(target(server.url("/status/503")))
        #expect(result.failure?.reason == .httpStatus(503))
        #expect(result.failure?.phase == .head)
        let accepted = await probe(target(server.url("/status/503"), expect: HTTPExpectation(statuses: [503...503])))
        #expect(accepted.isSuccess, "expect.status decides what is healthy")
        await prober.shutdown()
    }

    @Test func aRedirectIsNotFollowedAndItsLocationIsKept() async {
        let result = await probe(target(server.url("/redirect/portal.test/login")))
        #expect(result.failure?.reason == .httpStatus(302))
        #expect(result.failure?.location == "http://portal.test/login")
        #expect(result.failure?.detail == "HTTP 302, redirected to http://portal.test/login")
        let notRedirected = await probe(target(server.url("/status/503")))
        #expect(notRedirected.failure?.location == nil)
    }

    @Test func aClosedPortIsRefusedAtOnce() async throws {
        let result = await probe(target("http://127.0.0.1:\(try freeLoopbackPort())/api/v1/health"))
        #expect(result.failure?.reason == .connectionRefused)
        #expect(result.failure?.phase == .connect)
        #expect(result.failure?.detail == nil, "the reason says it all: \"connection refused\"")
        #expect(result.latency < .seconds(1), "refused at once, not at the deadline")
        // Over TLS the refusal comes back on the ClientHello's write, before any handshake.
        let https = await probe(target("https://127.0.0.1:\(try freeLoopbackPort())/api/v1/health"))
        #expect(https.failure == ProbeFailure(.connectionRefused, phase: .connect))
        #expect(https.timings.connect == nil, "never connected")
        let tcp = await TCPProber().probe(
            ProbeTarget(name: "tcp", check: .tcp(HostPort(host: "127.0.0.1", port: try freeLoopbackPort())))
        )
        #expect(tcp.failure == ProbeFailure(.connectionRefused, phase: .connect))
        await prober.shutdown()
    }

    @Test func aBlackholeTimesOutAtTheDeadlineWaitingForTheHead() async {
        let result = await probe(target("http://127.0.0.1:\(server.ports.blackhole)/api/v1/health"))
        #expect(result.failure?.reason == .timeout)
        #expect(result.failure?.phase == .head)
        #expect(result.latency >= .milliseconds(1_990) && result.latency < .milliseconds(2_500))
        await prober.shutdown()
    }

    @Test func aHandshakeThatNeverEndsTimesOutInTLSNotInConnect() async {
        let result = await probe(
            target("https://127.0.0.1:\(server.ports.blackhole)/api/v1/health", timeout: .seconds(1))
        )
        #expect(result.failure?.reason == .timeout)
        #expect(result.failure?.phase == .tls, "connected, then stuck in the handshake")
        #expect(result.timings.connect != nil)
        await prober.shutdown()
    }

    @Test func aBodyThatStallsAfterTheHeadTimesOutAtTheDeadline() async {
        let result = await probe(target(server.url("/stall-body")))
        #expect(result.failure?.reason == .timeout)
        #expect(result.failure?.phase == .body, "the deadline covers the body, not just the head")
        #expect(result.latency >= .milliseconds(1_990) && result.latency < .milliseconds(2_500))
        await prober.shutdown()
    }

    @Test func anAnswerIn1_9sPassesAndIn2_1sTimesOut() async {
        let inTime = await probe(target(server.url("/slow/1900")))
        #expect(inTime.isSuccess)
        let late = await probe(target(server.url("/slow/2100")))
        #expect(late.failure?.reason == .timeout)
        #expect(late.failure?.phase == .head)
        #expect(
            late.latency >= .milliseconds(1_990) && late.latency < .milliseconds(2_300),
            "cut at 2 s, not at the answer"
        )
        await prober.shutdown()
    }

    @Test func garbageInsteadOfHTTPIsAProtocolError() async {
        let result = await probe(target(server.url("/garbage")))
        #expect(result.failure?.reason == .protocolError)
        #expect(result.failure?.detail == "not an HTTP answer")
        await prober.shutdown()
    }

    @Test func aResetConnectionIsNamedAsSuch() async {
        let result = await probe(target(server.url("/reset")))
        #expect(result.failure?.reason == .connectionReset)
        #expect(result.failure?.detail == nil, "the reason says it all: \"the connection was reset\"")
        await prober.shutdown()
    }

    @Test func aSelfSignedCertificateFailsByDefaultAndPassesWithItsCA() async {
        let named = TLSSettings(serverName: server.ports.server_name)
        let untrusted = await probe(target(server.secureURL("/ok"), tls: named))
        #expect(untrusted.failure?.reason == .tlsFailure)
        #expect(untrusted.failure?.phase == .tls)
        #expect(untrusted.failure?.detail == "certificate verify failed", "the verifier's reason is kept")
        let trusted = await probe(
            target(
                server.secureURL("/ok"),
                tls: TLSSettings(caFile: server.ports.ca, serverName: server.ports.server_name)
            )
        )
        #expect(trusted.isSuccess)
        await prober.shutdown()
    }

    @Test func aCertificateForAnotherNameFailsEvenWithTheCA() async {
        let result = await probe(target(server.secureURL("/ok"), tls: TLSSettings(caFile: server.ports.ca)))
        #expect(
            result.failure?.reason == .tlsFailure,
            "the certificate names \(server.ports.server_name), not 127.0.0.1"
        )
        #expect(result.failure?.detail == "the certificate does not name the server")
        #expect(
            result.certificate?.subject == "CN=\(server.ports.server_name)",
            "verified, then refused for its name: still seen"
        )
        await prober.shutdown()
    }

    @Test func anUnresolvableNameIsADNSFailure() async {
        let result = await probe(target("http://reachd-nonexistent.invalid:80/api/v1/health"))
        #expect(result.failure?.reason == .dnsFailure)
        #expect(result.failure?.phase == .dns)
        // The resolver's words: no such name, or (without a name server) no answer.
        let words = ["name or service not known", "temporary failure in name resolution"]
        #expect(words.map { "reachd-nonexistent.invalid: \($0)" }.contains(result.failure?.detail ?? ""), "\(result)")
        await prober.shutdown()
    }

    @Test func bodyExpectationsJudgeTheBody() async {
        let contains = await probe(target(server.url("/ok"), expect: HTTPExpectation(bodyContains: "\"ok\"")))
        #expect(contains.isSuccess)
        let missing = await probe(target(server.url("/ok"), expect: HTTPExpectation(bodyContains: "ready")))
        #expect(missing.failure?.reason == .unexpectedBody)
        let pointer = JSONExpectation(pointer: "/status", equals: .string("ok"))
        let json = await probe(target(server.url("/json/ok"), expect: HTTPExpectation(json: pointer)))
        #expect(json.isSuccess)
        let degraded = await probe(target(server.url("/json/degraded"), expect: HTTPExpectation(json: pointer)))
        #expect(degraded.failure?.reason == .unexpectedBody)
        #expect(degraded.failure?.detail == "/status is \"degraded\", expected \"ok\"")
        let nested = await probe(
            target(
                server.url("/json/ok"),
                expect: HTTPExpectation(json: JSONExpectation(pointer: "/checks/db", equals: .bool(true)))
            )
        )
        #expect(nested.isSuccess)
        await prober.shutdown()
    }

    @Test func aHugeBodyIsReadUpToAMebibyteAndQuotedShortly() async {
        let pointer = JSONExpectation(pointer: "/status", equals: .string("ok"))
        let large = await probe(target(server.url("/big/512"), expect: HTTPExpectation(json: pointer)))
        #expect(large.failure?.reason == .unexpectedBody)
        #expect(large.failure?.detail?.count == ProbeFailure.detailLimit, "the 512 KiB value is not quoted whole")
        let huge = await probe(target(server.url("/big/2048"), expect: HTTPExpectation(json: pointer)))
        #expect(huge.failure?.reason == .unexpectedBody)
        #expect(huge.failure?.detail == "body is not JSON (only the first 1 MiB of the body is read)")
        await prober.shutdown()
    }

    @Test func headersAndTheBearerTokenAreSentAndTheTokenIsNeverShown() async {
        let anonymous = await probe(target(server.url("/auth")))
        #expect(anonymous.failure?.reason == .httpStatus(401))
        let result = await probe(
            target(
                server.url("/auth"),
                headers: [HTTPHeaderField(name: "X-Probe", value: "yes")],
                token: Secret("s3cret")
            )
        )
        #expect(result.isSuccess)
        let shown = "\(target(server.url("/auth"), token: Secret("s3cret")))"
        #expect(!shown.contains("s3cret"), "a target printed in a log line must not carry its token")
        await prober.shutdown()
    }

    @Test func theAddressFamilyIsHonoured() async {
        let v4 = await probe(target(server.url("/ok"), family: .ipv4))
        #expect(v4.isSuccess)
        let v6 = await probe(target(server.url("/ok"), family: .ipv6))
        #expect(v6.failure?.reason == .networkUnreachable, "an IPv4 address cannot be reached over IPv6")
        #expect(v6.failure?.detail == "the target is limited to ipv6, and 127.0.0.1 is not an ipv6 address")
        await prober.shutdown()
    }

    @Test func everyProbeOpensAFreshConnectionByDefault() async throws {
        let before = try await connections()
        for _ in 0..<3 { #expect(await probe(target(server.url("/ok"))).isSuccess) }
        let after = try await connections()
        #expect(after - before == 3 + 1, "three probes, three connections (and one for this count)")
        await prober.shutdown()
    }

    @Test func probesCloseWithAResetAndLeaveNoSocketInTimeWait() async throws {
        // Whichever side closes first keeps its socket in TIME_WAIT for a minute, unless the
        // probe's close is a reset: a probe a second would pile up sixty of them per target.
        let tcp = TCPProber()
        for _ in 0..<3 {
            #expect(await probe(target(server.url("/ok"))).isSuccess)
            let connected = await tcp.probe(
                ProbeTarget(name: "tcp", check: .tcp(HostPort(host: "127.0.0.1", port: server.ports.http)))
            )
            #expect(connected.isSuccess)
        }
        #expect(try timeWaitSockets(port: server.ports.http) == 0)
        await prober.shutdown()
    }

    /// Sockets in TIME_WAIT on either end of a connection to `port`, from `/proc/net/tcp`.
    private func timeWaitSockets(port: Int) throws -> Int {
        let table = try String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)
        let portHex = String(format: ":%04X", port)
        return table.split(separator: "\n").dropFirst().filter { line in
            let fields = line.split(separator: " ")
            // sl, local address, remote address, state (06 is TIME_WAIT)
            return fields.count > 3 && fields[3] == "06"
                && (fields[1].hasSuffix(portHex) || fields[2].hasSuffix(portHex))
        }.count
    }

    private func connections() async throws -> Int {
        let count = try await loopbackGet(port: server.ports.http, path: "/connections").body
        return try #require(Int(count))
    }
}
