import Foundation
import ReachCore
import ReachProbes
import ReachSupport
import ReachTestRigs
import Testing

/// The ICMP echo prober alone, with real ping sockets, run inside network namespaces of the test's
/// own: the prober's (`p0`: 10.77.0.1, fd77::1) joined by a veth to a peer's (`p1`: 10.77.0.2,
/// fd77::2) whose kernel answers echoes. Ping sockets are opened to every group in the prober's
/// namespace, as systemd's sysctl does, except where a case closes them.
@Suite(
    "ICMP echo prober in network namespaces",
    .enabled(if: TestNamespace.isAvailable, Comment(rawValue: TestNamespace.unavailableReason))
)
struct ICMPEchoProberTests {
    static let peer4 = "10.77.0.2", peer6 = "fd77::2"
    /// What the default prober allows a silent host: three requests 250 ms apart, then a second.
    static let bound = Duration.milliseconds(1500)

    /// Runs `body` with the two namespaces, wired, and deletes them after.
    private func withPair<T>(
        pingSockets open: Bool = true,
        _ body: (_ prober: TestNamespace, _ peer: TestNamespace) async throws -> T
    ) async throws -> T {
        let (prober, peer) = try await pair(pingSockets: open)
        do {
            let result = try await body(prober, peer)
            await prober.delete()
            await peer.delete()
            return result
        } catch {
            await prober.delete()
            await peer.delete()
            throw error
        }
    }

    private func pair(pingSockets open: Bool) async throws -> (prober: TestNamespace, peer: TestNamespace) {
        let prober = try await TestNamespace.make("icmp")
        let peer: TestNamespace
        do {
            peer = try await TestNamespace.make("icmp-peer")
        } catch {
            await prober.delete()
            throw error
        }
        do {
            try await prober.ip("link", "set", "lo", "up")
            try await prober.addVeth("p0", peer: "p1", in: peer)
            for (namespace, interface, number) in [(prober, "p0", 1), (peer, "p1", 2)] {
                try await namespace.ip("addr", "add", "10.77.0.\(number)/24", "dev", interface)
                try await namespace.ip("-6", "addr", "add", "fd77::\(number)/64", "dev", interface, "nodad")
                try await namespace.ip("link", "set", interface, "up")
            }
            try await prober.sysctl("net.ipv4.ping_group_range=\(open ? "0 2147483647" : "1 0")")
            try await prober.waitUntilUp("p0")
            try await peer.waitUntilUp("p1")
        } catch {
            await prober.delete()
            await peer.delete()
            throw error
        }
        return (prober, peer)
    }

    /// One echo from inside `namespace`, and how long it took.
    private func echo(
        _ address: String,
        interface: String? = nil,
        in namespace: TestNamespace,
        prober: ICMPEchoProber = ICMPEchoProber()
    ) async throws -> (outcome: ICMPEchoProber.Outcome, took: Duration) {
        let target = try #require(IPAddress(address))
        return try await namespace.enter {
            let started = ContinuousClock.now
            let outcome = await prober.echo(target, interface: interface)
            return (outcome, ContinuousClock.now - started)
        }
    }

    @Test(arguments: [peer4, peer6])
    func aPeerThatAnswersIsAnsweredWithItsRoundTrip(address: String) async throws {
        let (outcome, took, bound) = try await withPair { prober, _ in
            let (outcome, took) = try await echo(address, in: prober)
            // Bound to the interface, as the daemon asks its gateway.
            return (outcome, took, try await echo(address, interface: "p0", in: prober).outcome)
        }
        guard case .answered(let latency) = outcome else {
            Issue.record("\(address): \(outcome)")
            return
        }
        #expect(latency > .zero && latency <= took, "\(latency) of \(took)")
        #expect(took < .milliseconds(250), "the first request is answered, not a later one: \(took)")
        #expect(bound.isAnswered, "bound to p0: \(bound)")
    }

    @Test(arguments: [peer4, peer6])
    func aPeerWhoseAddressWasRemovedIsSilentWithinTheBound(address: String) async throws {
        let (before, outcome, took) = try await withPair { prober, peer in
            let before = try await echo(address, in: prober).outcome
            try await peer.ip("addr", "del", "\(address)/\(address.contains(":") ? 64 : 24)", "dev", "p1")
            let (outcome, took) = try await echo(address, in: prober)
            return (before, outcome, took)
        }
        #expect(before.isAnswered, "answered while it had the address: \(before)")
        #expect(outcome == .silent, "\(outcome)")
        #expect(
            took >= Self.bound - .milliseconds(20) && took < Self.bound + .milliseconds(750),
            "silent after \(took); the bound is \(Self.bound)"
        )
    }

    @Test(arguments: [peer4, peer6])
    func closedPingSocketsAreRefusedWithEACCESAtOnce(address: String) async throws {
        // A namespace's default, `1 0`: no group, root's included. The daemon then falls back to the neighbour table.
        let (outcome, took) = try await withPair(pingSockets: false) { prober, _ in try await echo(address, in: prober)
        }
        #expect(outcome == .notPermitted(errno: EACCES), "\(outcome)")
        #expect(took < .milliseconds(250), "\(took)")
    }

    @Test(arguments: ["127.0.0.1", "::1"])
    func loopbackAnswers(address: String) async throws {
        let (outcome, fromLoopback) = try await withPair { prober, _ in
            (try await echo(address, in: prober).outcome, try await echo(address, interface: "lo", in: prober).outcome)
        }
        #expect(outcome.isAnswered, "\(outcome)")
        #expect(fromLoopback.isAnswered, "bound to lo: \(fromLoopback)")
    }

    @Test func anInterfaceThatDoesNotExistFailsWithENODEV() async throws {
        let (outcome, took) = try await withPair { prober, _ in
            try await echo(Self.peer4, interface: "gone0", in: prober)
        }
        #expect(outcome == .failed(errno: ENODEV), "\(outcome)")
        #expect(took < .milliseconds(250), "\(took)")
    }

    @Test func aShorterProberKeepsItsOwnBound() async throws {
        let quick = ICMPEchoProber(count: 2, spacing: .milliseconds(100), wait: .milliseconds(200))
        let (outcome, took) = try await withPair { prober, peer in
            try await peer.ip("addr", "del", "\(Self.peer4)/24", "dev", "p1")
            return try await echo(Self.peer4, in: prober, prober: quick)
        }
        #expect(outcome == .silent, "\(outcome)")
        #expect(took >= .milliseconds(280) && took < .milliseconds(800), "silent after \(took); the bound is 300 ms")
    }
}

extension ICMPEchoProber.Outcome {
    var isAnswered: Bool {
        if case .answered = self { true } else { false }
    }
}
