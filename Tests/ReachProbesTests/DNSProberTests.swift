import Foundation
import NIOCore
import NIOPosix
import ReachCore
import ReachProbes
import ReachSupport
import ReachTestRigs
import ReachTesting
import Testing

/// The DNS prober against a real resolver, dnsmasq, in a network namespace of the test's own (so
/// that it owns port 53 on the namespace's loopback, and nftables there drops what a case says):
/// each way a `dns` target fails, with its own reason, and the resolver that answered named.
/// The prober runs on an event loop whose thread lives in the namespace.
@Suite(
    "DNS prober against dnsmasq in a network namespace",
    .enabled(if: TestNamespace.isAvailable, Comment(rawValue: TestNamespace.unavailableReason)),
    .enabled(if: Dnsmasq.isAvailable, "needs dnsmasq (dnsmasq-base)")
)
struct DNSProberTests {
    static let records =
        [
            "local=/probe.test/",
            "host-record=api.probe.test,192.0.2.10,2001:db8::10",
            "cname=www.probe.test,api.probe.test",
            "mx-host=probe.test,mail.probe.test,10",
        ] + (0..<40).map { "txt-record=big.probe.test,\"record \($0) \(String(repeating: "x", count: 60))\"" }

    /// Runs `body` with a namespace whose loopback has dnsmasq on 127.0.0.1:53, and a prober on
    /// an event loop inside it; removes both after.
    private func withResolver<T: Sendable>(
        _ body: @escaping @Sendable (_ namespace: TestNamespace, _ dnsmasq: Dnsmasq, _ probe: Probe) async throws -> T
    ) async throws -> T {
        let namespace = try await TestNamespace.make("dns")
        let dnsmasq: Dnsmasq
        do {
            try await namespace.ip("link", "set", "lo", "up")
            dnsmasq = try Dnsmasq(namespace: namespace, addresses: ["127.0.0.1"], records: Self.records)
            try await dnsmasq.start()
        } catch {
            await namespace.delete()
            throw error
        }
        do {
            let result = try await namespace.enter {
                let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
                do {
                    let result = try await body(namespace, dnsmasq, Probe(group: group))
                    try await group.shutdownGracefully()
                    return result
                } catch {
                    try? await group.shutdownGracefully()
                    throw error
                }
            }
            await dnsmasq.stop()
            await namespace.delete()
            return result
        } catch {
            await dnsmasq.stop()
            await namespace.delete()
            throw error
        }
    }

    /// Probes a `dns` target once, and says how long it took.
    struct Probe: Sendable {
        let group: MultiThreadedEventLoopGroup

        func callAsFunction(
            _ check: DNSCheck,
            timeout: Duration = .seconds(2),
            resolvers: SystemResolvers = SystemResolvers()
        ) async -> (result: ProbeResult, took: Duration) {
            let target = ProbeTarget(name: "dns", check: .dns(check), timeout: timeout)
            let started = ContinuousClock.now
            let result = await DNSProber(eventLoopGroup: group, resolvers: resolvers).awaitProbe(target)
            return (result, started.duration(to: .now))
        }
    }

    static let server = HostPort(host: "127.0.0.1", port: 53)

    static func check(
        _ name: String,
        _ type: DNSRecordType = .a,
        transport: DNSCheck.Transport = .udp,
        contains: String? = nil,
        server: HostPort? = server
    ) -> DNSCheck {
        DNSCheck(
            query: name,
            recordType: type,
            server: server,
            transport: transport,
            expectation: DNSExpectation(answerContains: contains)
        )
    }

    @Test func anAnswerAsExpectedNamesItsResolver() async throws {
        let (udp, tcp, mx) = try await withResolver { _, _, probe in
            (
                await probe(Self.check("api.probe.test", contains: "192.0.2.10")).result,
                await probe(Self.check("api.probe.test", .aaaa, transport: .tcp, contains: "2001:db8::10")).result,
                await probe(Self.check("probe.test", .mx, contains: "mail.probe.test")).result
            )
        }
        for result in [udp, tcp, mx] {
            #expect(result.isSuccess, "\(result)")
            #expect(result.resolver == Self.server)
            #expect(result.latency > .zero && result.latency < .seconds(1))
        }
    }

    @Test func eachWrongAnswerHasItsOwnReason() async throws {
        let (other, missing, refused, noData) = try await withResolver { _, _, probe in
            (
                await probe(Self.check("api.probe.test", contains: "192.0.2.11")).result,
                await probe(Self.check("missing.probe.test")).result,
                await probe(Self.check("outside.example")).result,
                await probe(Self.check("api.probe.test", .mx)).result
            )
        }
        #expect(other.failure?.reason == .unexpectedAnswer, "another address: \(other)")
        #expect(other.failure?.detail == "no record holds 192.0.2.11; the answer: 192.0.2.10")
        #expect(missing.failure?.reason == .nxdomain, "\(missing)")
        #expect(refused.failure?.reason == .dnsRefused, "dnsmasq refuses what it has no zone for: \(refused)")
        #expect(noData.failure?.reason == .unexpectedAnswer, "\(noData)")
        #expect([other, missing, refused, noData].allSatisfy { $0.resolver == Self.server })
    }

    @Test func aStoppedResolverIsRefusedAtOnce() async throws {
        let (result, took) = try await withResolver { _, dnsmasq, probe in
            await dnsmasq.stop()
            return await probe(Self.check("api.probe.test"))
        }
        #expect(result.failure?.reason == .connectionRefused, "\(result)")
        #expect(result.failure?.detail == "nothing answers DNS at 127.0.0.1:53")
        #expect(took < .seconds(1), "the port unreachable comes back at once: \(took)")
    }

    @Test func aResolverBehindTheLossRuleTimesOut() async throws {
        let (result, took) = try await withResolver { namespace, _, probe in
            try await NFTables.drop(in: namespace, "udp dport 53")
            return await probe(Self.check("api.probe.test"), timeout: .milliseconds(800))
        }
        #expect(result.failure?.reason == .timeout, "\(result)")
        #expect(result.failure?.detail == "no answer from 127.0.0.1:53")
        #expect(took >= .milliseconds(780) && took < .milliseconds(1500), "\(took)")
    }

    @Test func aTruncatedAnswerIsAskedAgainOverTCP() async throws {
        let (result, overTCP) = try await withResolver { namespace, _, probe in
            let result = await probe(Self.check("big.probe.test", .txt, contains: "record 39")).result
            // With TCP closed, the whole answer cannot be had: the truncated answer is the reason.
            try await NFTables.drop(in: namespace, "tcp dport 53")
            return (result, await probe(Self.check("big.probe.test", .txt), timeout: .milliseconds(500)).result)
        }
        #expect(result.isSuccess, "the 40th record is only in the whole answer: \(result)")
        #expect(overTCP.failure?.reason == .truncatedAnswer, "\(overTCP)")
    }

    @Test func theHostsResolversAreAskedInTurn() async throws {
        let directory = try TemporaryDirectory("resolv")
        let (refusedFirst, silentFirst, none) = try await withResolver { namespace, _, probe in
            // 127.0.0.9: nothing listens (refused); 127.0.0.8: dropped (silent).
            try await NFTables.drop(in: namespace, "ip daddr 127.0.0.8")
            let write = { (text: String) in
                let path = "\(directory.path)/\(UUID().uuidString).conf"
                try text.write(toFile: path, atomically: true, encoding: .utf8)
                return SystemResolvers(resolvConf: path, resolvedUpstream: "\(directory.path)/none")
            }
            return (
                await probe(
                    Self.check("api.probe.test", server: nil),
                    resolvers: try write("nameserver 127.0.0.9\nnameserver 127.0.0.1\n")
                ),
                await probe(
                    Self.check("api.probe.test", server: nil),
                    resolvers: try write("nameserver 127.0.0.8\nnameserver 127.0.0.1\n")
                ),
                await probe(Self.check("api.probe.test", server: nil), resolvers: try write("search probe.test\n"))
                    .result
            )
        }
        #expect(refusedFirst.result.isSuccess && refusedFirst.result.resolver == Self.server, "\(refusedFirst)")
        #expect(refusedFirst.took < .milliseconds(500), "a refusal moves on at once: \(refusedFirst.took)")
        #expect(silentFirst.result.isSuccess && silentFirst.result.resolver == Self.server, "\(silentFirst)")
        #expect(silentFirst.took >= .milliseconds(950), "a silent one has its half of the timeout: \(silentFirst.took)")
        #expect(none.failure?.reason == .noResolver && none.resolver == nil, "\(none)")
    }
}
