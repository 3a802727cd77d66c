import Foundation
import ReachCore
import ReachProbes
import ReachSupport
import ReachTestRigs
import ReachTesting
import Testing

/// The `icmp` target's prober with real ping sockets, in network namespaces of the test's own: the
/// prober's (`b0`: 10.76.0.1, fd76::1) joined by a veth to a router's (`b1`: 10.76.0.2, fd76::2)
/// whose kernel answers echoes, and which routes 10.75.0.0/24 to a link where nobody answers its
/// neighbour lookups (so it reports the echoes host unreachable); a case adds a routing loop. Ping
/// sockets are open to every group in the prober's namespace, as systemd's sysctl does, except
/// where a case closes them.
@Suite(
    "ICMP echo bursts in network namespaces",
    .enabled(if: TestNamespace.isAvailable, Comment(rawValue: TestNamespace.unavailableReason))
)
struct ICMPBurstProberTests {
    static let router = "10.76.0.2", router6 = "fd76::2", unreachable = "10.75.0.5"

    private func withPair<T: Sendable>(
        pingSockets open: Bool = true,
        _ body: @escaping @Sendable (_ prober: TestNamespace, _ router: TestNamespace) async throws -> T
    ) async throws -> T {
        let prober = try await TestNamespace.make("burst")
        let router: TestNamespace
        do {
            router = try await TestNamespace.make("burst-router")
        } catch {
            await prober.delete()
            throw error
        }
        do {
            try await prober.ip("link", "set", "lo", "up")
            try await router.ip("link", "set", "lo", "up")
            try await prober.ip("link", "add", "b0", "type", "veth", "peer", "name", "b1", "netns", router.name)
            for (namespace, interface, number) in [(prober, "b0", 1), (router, "b1", 2)] {
                try await namespace.ip("addr", "add", "10.76.0.\(number)/24", "dev", interface)
                try await namespace.ip("-6", "addr", "add", "fd76::\(number)/64", "dev", interface, "nodad")
                try await namespace.ip("link", "set", interface, "up")
            }
            try await prober.ip("route", "add", "default", "via", Self.router)
            try await router.routeToNowhere("10.75.0.0/24")
            try await prober.sysctl("net.ipv4.ping_group_range=\(open ? "0 2147483647" : "1 0")")
            try await prober.waitUntilUp("b0")
            try await router.waitUntilUp("b1")
            let result = try await body(prober, router)
            await prober.delete()
            await router.delete()
            return result
        } catch {
            await prober.delete()
            await router.delete()
            throw error
        }
    }

    /// One probe of `host` from inside `namespace`, with a loop of its own started there.
    private static func probe(
        _ host: String,
        packets: Int = 5,
        interval: Duration = .seconds(1),
        timeout: Duration = .seconds(2),
        family: AddressFamily = .auto,
        in namespace: TestNamespace
    ) async throws -> (result: ProbeResult, took: Duration) {
        try await namespace.enter {
            let prober = ICMPBurstProber()
            defer { prober.shutdown() }
            let target = ProbeTarget(
                name: "ping",
                check: .icmp(ICMPCheck(host: host, packets: packets)),
                interval: interval,
                timeout: timeout,
                addressFamily: family
            )
            let started = ContinuousClock.now
            let result = await prober.awaitProbe(target)
            return (result, started.duration(to: .now))
        }
    }

    @Test(arguments: [router, router6, "localhost"])
    func aHostThatAnswersEveryEchoReportsTheBurst(host: String) async throws {
        let (result, took) = try await withPair { prober, _ in try await Self.probe(host, in: prober) }
        let echoes = try #require(result.echoes)
        #expect(result.isSuccess, "\(result)")
        #expect(echoes.sent == 5 && echoes.received == 5, "\(echoes)")
        let (minimum, median, maximum) = (
            try #require(echoes.minimum), try #require(echoes.median), try #require(echoes.maximum)
        )
        #expect(.zero < minimum && minimum <= median && median <= maximum && maximum < .milliseconds(100))
        #expect(result.latency == median, "the latency is the median round trip")
        #expect(echoes.jitter != nil)
        // Five echoes 200 ms apart (the 1 s interval, or half the 2 s timeout, shared by five), and
        // the last answer ends it: well before the timeout (the bound leaves room for a loaded machine).
        #expect(took >= .milliseconds(790) && took < .milliseconds(1900), "the burst spans the interval: \(took)")
    }

    @Test func closedPingSocketsAreNotPermittedNamingTheSysctl() async throws {
        let (result, took) = try await withPair(pingSockets: false) { prober, _ in
            try await Self.probe(Self.router, in: prober)
        }
        #expect(result.failure?.reason == .notPermitted, "\(result)")
        #expect(result.failure?.detail == "net.ipv4.ping_group_range \"1 0\" leaves out group root (0)")
        #expect(took < .seconds(1), "at once, not at the 2 s timeout: \(took)")
        #expect(Fault(.notPermitted) == nil, "no part of the path is at fault")
    }

    @Test func everyEchoDroppedIsATimeoutAfterTheDeadline() async throws {
        let (result, took) = try await withPair { prober, router in
            try await NFTables.drop(in: router, "icmp type echo-request")
            return try await Self.probe(Self.router, timeout: .seconds(1), in: prober)
        }
        #expect(result.failure?.reason == .timeout, "\(result)")
        #expect(result.failure?.detail == "no reply to 5 echoes")
        #expect(result.echoes == EchoStatistics(sent: 5, roundTrips: []))
        #expect(took >= .milliseconds(980) && took < .milliseconds(1900), "at the 1 s deadline, not later: \(took)")
    }

    @Test func oneEchoOfTheBurstBackIsUpWithItsLoss() async throws {
        let (result, _) = try await withPair { prober, router in
            // Four of every five echoes dropped, counted (not at random): only the fifth answers.
            try await NFTables.drop(in: router, "icmp type echo-request numgen inc mod 5 < 4")
            return try await Self.probe(Self.router, in: prober)
        }
        #expect(result.isSuccess, "\(result)")
        #expect(result.echoes?.sent == 5 && result.echoes?.received == 1 && result.echoes?.loss == 0.8)
        #expect(result.echoes?.jitter == nil, "one round trip has no difference")
    }

    @Test func anUnreachableHostIsTheRoutersICMPErrorWithItsAddress() async throws {
        let (result, _) = try await withPair { prober, _ in
            try await Self.probe(Self.unreachable, timeout: .seconds(4), in: prober)
        }
        #expect(result.failure?.reason == .destinationUnreachable, "\(result)")
        #expect(result.failure?.reportedBy == IPAddress(Self.router))
        #expect(result.failure?.detail == "host unreachable, from \(Self.router)")
        #expect(result.echoes?.received == 0)
    }

    @Test func aRoutingLoopIsTimeExceededFromTheRouterWhereTheHopsRanOut() async throws {
        // The router sends 10.77.0.0/24 to a third namespace (10.78.0.2), which sends it back: the
        // echoes go round until their 64 hops run out, at the third one (the 64th forward).
        let (result, _) = try await withPair { prober, router in
            let loop = try await TestNamespace.make("burst-loop")
            do {
                try await router.ip("link", "add", "r0", "type", "veth", "peer", "name", "r1", "netns", loop.name)
                try await router.ip("addr", "add", "10.78.0.1/30", "dev", "r0")
                try await loop.ip("addr", "add", "10.78.0.2/30", "dev", "r1")
                try await router.ip("link", "set", "r0", "up")
                try await loop.ip("link", "set", "r1", "up")
                try await router.ip("route", "add", "10.77.0.0/24", "via", "10.78.0.2")
                try await loop.ip("route", "add", "default", "via", "10.78.0.1")
                try await loop.sysctl("net.ipv4.ip_forward=1", "net.ipv4.icmp_ratelimit=0")
                try await router.waitUntilUp("r0")
                try await loop.waitUntilUp("r1")
                let result = try await Self.probe("10.77.0.5", timeout: .seconds(2), in: prober)
                await loop.delete()
                return result
            } catch {
                await loop.delete()
                throw error
            }
        }
        #expect(result.failure?.reason == .timeExceeded, "\(result)")
        #expect(result.failure?.reportedBy == IPAddress("10.78.0.2"))
        #expect(result.failure?.detail == "TTL exceeded in transit, from 10.78.0.2")
        #expect(result.echoes?.sent == 5 && result.echoes?.received == 0)
    }

    @Test func anotherTargetsICMPErrorsDoNotTouchAHealthyTarget() async throws {
        // One socket serves every target: the errors about one must not fail another's sends.
        let (healthy, unreachable) = try await withPair { prober, _ in
            try await prober.enter {
                let loop = ICMPBurstProber()
                defer { loop.shutdown() }
                async let unreachable = loop.awaitProbe(Self.target("unreachable", Self.unreachable, packets: 10))
                async let healthy = loop.awaitProbe(Self.target("healthy", Self.router, packets: 10))
                return await (healthy, unreachable)
            }
        }
        #expect(healthy.isSuccess && healthy.echoes?.received == 10, "\(healthy)")
        #expect(unreachable.failure?.reason == .destinationUnreachable, "\(unreachable)")
    }

    static func target(_ name: String, _ host: String, packets: Int) -> ProbeTarget {
        ProbeTarget(name: name, check: .icmp(ICMPCheck(host: host, packets: packets)), timeout: .seconds(4))
    }

    @Test func anAddressOfTheOtherFamilyIsRefusedWithoutAnEcho() async throws {
        let (result, _) = try await withPair { prober, _ in try await Self.probe(Self.router, family: .ipv6, in: prober)
        }
        #expect(result.failure?.reason == .networkUnreachable, "\(result)")
        #expect(result.echoes == nil)
    }

    @Test func cancellingEndsTheBurstAtOnce() async throws {
        let (result, took) = try await withPair { prober, router in
            try await NFTables.drop(in: router, "icmp type echo-request")
            return try await prober.enter {
                let loop = ICMPBurstProber()
                defer { loop.shutdown() }
                let target = ProbeTarget(name: "ping", check: .icmp(ICMPCheck(host: Self.router)), timeout: .seconds(5))
                let started = ContinuousClock.now
                let (results, done) = AsyncStream.makeStream(of: ProbeResult.self)
                let cancellation = loop.start(target) { done.yield($0) }
                try await Task.sleep(for: .milliseconds(300))  // a burst under way, then the cancellation
                cancellation.cancel()
                var ended = results.makeAsyncIterator()
                return (try #require(await ended.next()), started.duration(to: .now))
            }
        }
        #expect(result.failure?.reason == .cancelled, "\(result)")
        #expect(took < .seconds(1), "\(took)")
    }
}
