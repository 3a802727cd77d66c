import Foundation
import Logging
import ReachCore
import ReachProbes
import ReachSupport
import ReachTestRigs
import ReachTesting
import Testing

/// The gRPC health prober against a real grpc.health.v1 server (grpcio's, in Python) on 127.0.0.1,
/// and against a closed port and a listener that never speaks.
///
/// Serialized: several tests measure latencies, which parallel tests on two cores would blur.
@Suite("gRPC health probe against a real grpcio health server", .serialized, .timeLimit(.minutes(2)))
struct GRPCHealthProberTests {
    let prober: GRPCHealthProber

    init() {
        // Debug level: the prober's lines (the error chain of each failure, why a watch stream
        // ended) are the record of what was observed.
        var logger = Logger(label: "grpc-health-test")
        logger.logLevel = .debug
        prober = GRPCHealthProber(logger: logger)
    }

    func target(
        host: String = "127.0.0.1",
        port: Int,
        service: String = "",
        timeout: Duration = .seconds(5),
        family: AddressFamily = .auto
    ) -> ProbeTarget {
        ProbeTarget(
            name: "grpc",
            check: .grpc(GRPCHealthCheck(endpoint: HostPort(host: host, port: port), service: service, watch: true)),
            timeout: timeout,
            addressFamily: family
        )
    }

    func probe(_ target: ProbeTarget) async -> ProbeResult {
        let result = await prober.probe(target)
        let outcome = result.failure.map { "\($0.reason) in \($0.phase?.rawValue ?? "-"): \($0.detail ?? "")" } ?? "ok"
        print("\(target.endpoint) \(target.addressFamily.rawValue) \(target.check): \(outcome) after \(result.latency)")
        expectOurWords(result.failure)
        return result
    }

    func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    // MARK: - Check

    @Test func servingIsASuccess() async throws {
        let server = try await GRPCHealthServerProcess()
        defer { server.stop() }
        let result = await probe(target(port: server.port, timeout: .seconds(15)))
        #expect(result.isSuccess, "a generous deadline: this pins the verdict, not the speed")
    }

    @Test func notServingIsReportedAsNotServing() async throws {
        let server = try await GRPCHealthServerProcess()
        defer { server.stop() }
        try await server.send("not_serving")
        let result = await probe(target(port: server.port))
        #expect(result.failure?.reason == .notServing)
        #expect(result.failure?.detail == "NOT_SERVING")

        try await server.send("serving")
        #expect(await probe(target(port: server.port)).isSuccess)
    }

    @Test func aNamedServiceHasItsOwnStatus() async throws {
        let server = try await GRPCHealthServerProcess()
        defer { server.stop() }
        try await server.send("serving api")
        #expect(await probe(target(port: server.port, service: "api")).isSuccess)

        try await server.send("not_serving api")
        #expect(await probe(target(port: server.port, service: "api")).failure?.reason == .notServing)
        // The server as a whole is still serving.
        #expect(await probe(target(port: server.port)).isSuccess)

        try await server.send("unknown api")
        let unknown = await probe(target(port: server.port, service: "api"))
        #expect(unknown.failure?.reason == .notServing)
        #expect(unknown.failure?.detail == "UNKNOWN")
    }

    /// grpcio answers Check for a service it does not know with status NOT_FOUND, as the spec
    /// says (SERVICE_UNKNOWN is for Watch only): the prober reports it as not serving.
    @Test func anUnknownServiceIsNotServing() async throws {
        let server = try await GRPCHealthServerProcess()
        defer { server.stop() }
        let result = await probe(target(port: server.port, service: "no.such.Service"))
        #expect(result.failure?.reason == .notServing)
        #expect(result.failure?.detail == "SERVICE_UNKNOWN (NOT_FOUND)")
    }

    @Test func aServerWithoutTheHealthServiceIsAProtocolError() async throws {
        let server = try await GRPCHealthServerProcess(mode: .withoutHealth)
        defer { server.stop() }
        let result = await probe(target(port: server.port))
        #expect(result.failure?.reason == .protocolError)
        #expect(
            result.failure?.detail == "unimplemented: Method not found!",
            "the status and message the server answered with"
        )
    }

    @Test func aServerThatIsNotGRPCIsAProtocolError() async throws {
        let server = try await GRPCHealthServerProcess(mode: .http1)
        defer { server.stop() }
        let result = await probe(target(port: server.port))
        #expect(result.failure?.reason == .protocolError)
        #expect(result.failure?.detail == "the server does not speak HTTP/2: not a gRPC server")
        #expect(result.latency < .seconds(5), "inside the deadline")
    }

    @Test func aClosedPortIsRefusedFast() async throws {
        let port = try freeLoopbackPort()
        let result = await probe(target(port: port))
        #expect(result.failure?.reason == .connectionRefused)
        #expect(result.failure?.phase == .connect)
        #expect(result.failure?.detail == nil, "the reason says it all: \"connection refused\"")
        #expect(result.latency < .seconds(5), "inside the deadline")
    }

    @Test func aListenerThatNeverSpeaksTimesOutAtTheDeadline() async throws {
        let listener = SilentTCPListener()
        defer { withExtendedLifetime(listener) {} }
        let result = await probe(target(port: listener.port, timeout: .milliseconds(500)))
        #expect(result.failure?.reason == .timeout)
        // TCP connected; the server's HTTP/2 settings never came.
        #expect(result.failure?.phase == .head)
        #expect(result.latency >= .milliseconds(450))
        #expect(result.latency < .milliseconds(1500))
    }

    @Test func anUnresolvableNameIsADNSFailure() async throws {
        let result = await probe(target(host: "no-such-host.invalid", port: 50051))
        #expect(result.failure?.reason == .dnsFailure)
        #expect(result.failure?.phase == .dns)
        // The resolver's words: no such name, or (without a name server) no answer.
        #expect(
            ["name or service not known", "temporary failure in name resolution"].contains(
                result.failure?.detail ?? ""
            ),
            "\(result)"
        )
    }

    @Test func aPinnedFamilyUsesOnlyThatFamily() async throws {
        let server = try await GRPCHealthServerProcess()  // listens on 127.0.0.1 only
        defer { server.stop() }
        #expect(await probe(target(host: "localhost", port: server.port, family: .ipv4)).isSuccess)
        #expect(await probe(target(host: "127.0.0.1", port: server.port, family: .ipv4)).isSuccess)

        // Over IPv6 the same server is not there: ::1 refuses, and an IPv4 literal has no IPv6 address.
        let overIPv6 = await probe(target(host: "::1", port: server.port, family: .ipv6))
        #expect(overIPv6.failure?.reason == .connectionRefused)
        let literal = await probe(target(host: "127.0.0.1", port: server.port, family: .ipv6))
        #expect(literal.failure?.reason == .dnsFailure)
        #expect(literal.failure?.detail == "127.0.0.1 (ipv6): address family for hostname not supported")
        #expect(await !probe(target(host: "localhost", port: server.port, family: .ipv6)).isSuccess)
    }

    @Test func cancellingTheCallerEndsTheProbeAtOnce() async throws {
        let listener = SilentTCPListener()
        defer { withExtendedLifetime(listener) {} }
        let prober = self.prober
        let probeTarget = target(port: listener.port, timeout: .seconds(10))
        let started = ContinuousClock.now
        let task = Task { await prober.probe(probeTarget) }
        // The probe has connected and waits for an answer that never comes.
        try await waitUntil("the probe's connection") { listener.hasPendingConnection }
        task.cancel()
        let result = await task.value
        #expect(result.failure?.reason == .cancelled)
        #expect(ContinuousClock.now - started < .seconds(1))
    }

    // MARK: - Watch

    @Test func watchReportsAStatusSwitchAsItHappens() async throws {
        let server = try await GRPCHealthServerProcess()
        defer { server.stop() }
        let recorder = WatchRecorder()
        let prober = self.prober
        let watchTarget = target(port: server.port)
        let watching = Task {
            await prober.watch(watchTarget, epoch: recorder.nextEpoch) { recorder.record($0, epoch: $1) }
        }
        defer { watching.cancel() }

        let first = await recorder.first(from: 0, within: .seconds(5)) { _ in true }
        #expect(first?.result.isSuccess == true)

        var mark = recorder.count
        var sent = ContinuousClock.now
        try await server.send("not_serving")
        let down = await recorder.first(from: mark, within: .seconds(2)) { !$0.isSuccess }
        #expect(down?.result.failure?.reason == .notServing)
        if let down {
            print("NOT_SERVING reported \(milliseconds(down.at - sent)) ms after the switch")
            #expect(down.at - sent < .milliseconds(500))
        }

        mark = recorder.count
        sent = ContinuousClock.now
        try await server.send("serving")
        let up = await recorder.first(from: mark, within: .seconds(2)) { $0.isSuccess }
        #expect(up != nil)
        if let up { #expect(up.at - sent < .milliseconds(500)) }
        #expect(Set(recorder.all.map(\.epoch)).count == 1, "one stream: every status carries the epoch it opened in")
    }

    @Test func watchReportsAKilledServerAtOnceAndItsReturn() async throws {
        let server = try await GRPCHealthServerProcess()
        defer { server.stop() }
        let port = server.port
        let recorder = WatchRecorder()
        let prober = self.prober
        let watchTarget = target(port: port)
        let watching = Task {
            await prober.watch(watchTarget, epoch: recorder.nextEpoch) { recorder.record($0, epoch: $1) }
        }
        defer { watching.cancel() }

        let first = await recorder.first(from: 0, within: .seconds(5)) { _ in true }
        #expect(first?.result.isSuccess == true)

        let mark = recorder.count
        let killed = ContinuousClock.now
        await server.kill()
        let down = await recorder.first(from: mark, within: .seconds(5)) { !$0.isSuccess }
        #expect(down != nil)
        if let down {
            print(
                "SIGKILL reported as \(down.result.failure?.reason.code ?? "-") \(milliseconds(down.at - killed)) ms after the kill"
            )
            // Refused once the port is closed; reset when the Check raced the dying process's sockets.
            #expect([.connectionRefused, .connectionReset].contains(down.result.failure?.reason))
            #expect(down.at - killed < .seconds(1))
            // The Check after the broken stream is its own observation, begun after the stream's.
            if let first { #expect(down.epoch > first.epoch, "the Check reports the epoch read when it began") }
        }

        // The server comes back on the same port: the watch re-opens (backoff capped at 1 s).
        let restarted = ContinuousClock.now
        let again = try await GRPCHealthServerProcess(port: port)
        let back = await recorder.first(from: recorder.count, within: .seconds(5)) { $0.isSuccess }
        #expect(back != nil)
        if let back { print("restart seen \(milliseconds(back.at - restarted)) ms after it began") }
        watching.cancel()
        await watching.value
        again.stop()
    }

    /// A server without the health service answers Watch with UNIMPLEMENTED: the watch falls back
    /// to one Check per attempt, with the pause between attempts growing to its 1 s cap.
    @Test func watchWithoutAHealthServiceFallsBackToChecksWithBackoff() async throws {
        let server = try await GRPCHealthServerProcess(mode: .withoutHealth)
        defer { server.stop() }
        let recorder = WatchRecorder()
        let prober = self.prober
        let watchTarget = target(port: server.port)
        let watching = Task {
            await prober.watch(watchTarget, epoch: recorder.nextEpoch) { recorder.record($0, epoch: $1) }
        }
        // Five attempts: the pauses of 100, 200, 400 and 800 ms between them make at least 1.5 s.
        try await waitUntil("five attempts", timeout: .seconds(10)) { recorder.count >= 5 }
        watching.cancel()
        await watching.value

        #expect(recorder.all.allSatisfy { $0.result.failure?.reason == .protocolError })
        // Each pause at least as long as promised, doubling: not a busy loop.
        let instants = recorder.all.prefix(5).map(\.at)
        let gaps = zip(instants.dropFirst(), instants).map { $0 - $1 }
        #expect(zip(gaps, [100, 200, 400, 800]).allSatisfy { $0 >= .milliseconds($1) }, "gaps \(gaps)")
        // A sixth attempt comes only a second after the fifth: cancelled before it.
        #expect((2...7).contains(recorder.count))
    }

    @Test func watchOnASilentListenerFallsBackToChecks() async throws {
        let listener = SilentTCPListener()
        defer { withExtendedLifetime(listener) {} }
        let recorder = WatchRecorder()
        let prober = self.prober
        let watchTarget = target(port: listener.port, timeout: .milliseconds(300))
        let watching = Task {
            await prober.watch(watchTarget, epoch: recorder.nextEpoch) { recorder.record($0, epoch: $1) }
        }

        // No status within the timeout: the watch gives up on the stream and runs a Check, which times out.
        let report = await recorder.first(from: 0, within: .seconds(3)) { _ in true }
        #expect(report?.result.failure?.reason == .timeout)

        let cancelled = ContinuousClock.now
        watching.cancel()
        await watching.value
        #expect(ContinuousClock.now - cancelled < .seconds(1))
    }
}
