import Foundation
import ReachTestRigs
import ReachTesting
import Testing

/// `dns` and `icmp` targets on a real wire, as reachd runs them: reachd in a host namespace, its
/// default route through a server namespace that is its gateway (10.74.0.1), answers echoes, runs
/// dnsmasq on 10.74.1.53, and routes 10.75.0.0/24 to a link where nobody answers (so it reports
/// echoes there host unreachable). The host's `/etc/resolv.conf` (the one `ip netns exec` mounts)
/// names the dnsmasq, for a `dns` target without a server. Each case waits for the status document
/// (read with reachctl on reachd's unix socket) to say the target's reason and the verdict's fault.
@Suite(
    "dns and icmp targets on a real wire",
    .enabled(if: TestNamespace.isAvailable, Comment(rawValue: TestNamespace.unavailableReason)),
    .enabled(if: Dnsmasq.isAvailable, "needs dnsmasq (dnsmasq-base)")
)
struct DNSAndICMPTargetProcessTests {
    static let gateway = "10.74.0.1", resolver = "10.74.1.53", unreachable = "10.75.0.5"

    /// The namespaces, the resolver's records, and the host's resolv.conf.
    final class Wire: Sendable {
        let host: TestNamespace
        let server: TestNamespace
        let directory: TemporaryDirectory
        var etc: String { "/etc/netns/\(host.name)" }

        init() async throws {
            directory = try TemporaryDirectory("wire")
            host = try await TestNamespace.make("wire-host")
            do {
                server = try await TestNamespace.make("wire-server")
            } catch {
                await host.delete()
                throw error
            }
        }

        func build(pingSockets open: Bool) async throws {
            for namespace in [host, server] { try await namespace.ip("link", "set", "lo", "up") }
            try await host.ip("link", "add", "w0", "type", "veth", "peer", "name", "w1", "netns", server.name)
            try await host.ip("addr", "add", "10.74.0.2/24", "dev", "w0")
            try await server.ip("addr", "add", "\(DNSAndICMPTargetProcessTests.gateway)/24", "dev", "w1")
            try await host.ip("link", "set", "w0", "up")
            try await server.ip("link", "set", "w1", "up")
            try await host.ip("route", "add", "default", "via", DNSAndICMPTargetProcessTests.gateway)
            try await server.ip("addr", "add", "\(DNSAndICMPTargetProcessTests.resolver)/32", "dev", "lo")
            try await server.routeToNowhere("10.75.0.0/24")
            try await host.sysctl("net.ipv4.ping_group_range=\(open ? "0 2147483647" : "1 0")")
            try FileManager.default.createDirectory(atPath: etc, withIntermediateDirectories: true)
            try "nameserver \(DNSAndICMPTargetProcessTests.resolver)\n".write(
                toFile: "\(etc)/resolv.conf",
                atomically: true,
                encoding: .utf8
            )
            try await host.waitUntilUp("w0")
            try await server.waitUntilUp("w1")
        }

        /// dnsmasq on the resolver's address with `records` (the zone `wire.test`), started.
        func resolver(_ records: [String]) async throws -> Dnsmasq {
            let dnsmasq = try Dnsmasq(
                namespace: server,
                addresses: [DNSAndICMPTargetProcessTests.resolver],
                records: ["local=/wire.test/"] + records
            )
            try await dnsmasq.start()
            return dnsmasq
        }

        func tearDown() async {
            await host.delete()
            await server.delete()
            try? FileManager.default.removeItem(atPath: etc)
        }
    }

    /// reachd in the host namespace on `targets`, its status read on its unix socket.
    struct Daemon {
        let process: ReachdProcess
        let socket: String

        init(_ wire: Wire, targets: String, policy: String = "all") throws {
            socket = "\(wire.directory.path)/reachd.sock"
            let configuration = """
                socket: \(socket)
                upstream: { check: none }
                policy: \(policy)
                probe: { failures_before_down: 1, successes_before_up: 1 }
                targets:
                \(targets)
                """
            process = try ReachdProcess(
                configuration: configuration,
                in: wire.directory.path,
                listen: "127.0.0.1:0",
                namespace: wire.host
            )
        }

        /// The embedded engine (ReachKitEmbedded, in `embedded-verdicts-helper`) on the same
        /// configuration, in the same namespace: its verdicts are framed as reachd's events.
        func embedded(in wire: Wire) throws -> ChildProcess {
            try ChildProcess(
                "embedded",
                executable: TestNamespace.ipPath,
                arguments: [
                    "netns", "exec", wire.host.name,
                    BuiltProducts.directory.appending(path: "embedded-verdicts-helper").path,
                    try #require(process.configurationPath),
                ]
            )
        }

        /// The status document, parsed; `nil` while reachd does not answer.
        func status() async -> [String: Any]? {
            guard let result = try? await reachctl(["--endpoint", socket, "status", "--json"]),
                let object = try? JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
            else { return nil }
            return object
        }

        /// Waits until the status says `reason` for `target` (and, when given, the verdict's `fault`);
        /// returns that target's entry.
        @discardableResult
        func waitFor(
            _ target: String,
            reason: String?,
            fault: String?? = nil,
            timeout: Duration = .seconds(20)
        ) async throws -> [String: Any] {
            var last: [String: Any]?
            do {
                return try await ReachTesting.waitFor("\(target): \(reason ?? "healthy")", timeout: timeout) {
                    guard let status = await status(),
                        let entry = (status["targets"] as? [[String: Any]])?.first(where: {
                            $0["name"] as? String == target
                        })
                    else { return nil }
                    last = status
                    let health = entry["health"] as? String
                    guard
                        reason == nil
                            ? health == "healthy" : health == "unhealthy" && entry["reason"] as? String == reason
                    else { return nil }
                    if let fault, (status["fault"] as? String) != fault { return nil }
                    return entry
                }
            } catch {
                throw ChildProcess.Failed(description: "\(error); the last status: \(last ?? [:])\n\(process.log)")
            }
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func eachDNSFailureHasItsReasonAndIsTheResolversFault() async throws {
        let wire = try await Wire()
        var resolver: Dnsmasq?
        var daemon: Daemon?
        var embedded: ChildProcess?
        do {
            try await wire.build(pingSockets: true)
            resolver = try await wire.resolver(["host-record=api.wire.test,192.0.2.10"])
            let started = try Daemon(
                wire,
                targets: """
                          - name: named
                            kind: dns
                            query: api.wire.test
                            server: \(Self.resolver)
                            expect: { answer_contains: 192.0.2.10 }
                          - name: hosts
                            kind: dns
                            query: api.wire.test
                    """
            )
            daemon = started
            let named = try await started.waitFor("named", reason: nil)
            #expect(named["resolver"] as? String == "\(Self.resolver):53")
            let hosts = try await started.waitFor("hosts", reason: nil)
            #expect(hosts["resolver"] as? String == "\(Self.resolver):53", "this host's resolver, from its resolv.conf")
            let text = try await reachctl(["--endpoint", started.socket, "status"]).output
            #expect(text.contains("via \(Self.resolver):53"), "\(text)")

            let helper = try started.embedded(in: wire)
            embedded = helper
            _ = try await helper.waitForLine(timeout: .seconds(20)) {
                $0.contains("\"state\":\"connected\"") && $0.contains("\"resolver\":\"\(Self.resolver):53\"")
            }

            // The name gone: NXDOMAIN, said by the embedded engine too; the log's fields are the
            // journal's REACHD_REASON and REACHD_RESOLVER.
            await resolver?.stop()
            resolver = try await wire.resolver([])
            try await started.waitFor("named", reason: "nxdomain", fault: "dns")
            _ = try await helper.waitForLine(timeout: .seconds(20)) {
                $0.contains("\"reason\":\"nxdomain\"") && $0.contains("\"fault\":\"dns\"")
            }
            // The move down is logged with whichever reason came first (while one dnsmasq stops and
            // the next starts, nothing answers: connection_refused), and the resolver asked.
            let logged = try await started.process.waitForLog(containing: "target named down: ")
            let line = logged.split(separator: "\n").first { $0.contains("target named down: ") } ?? ""
            #expect(line.contains("reason=") && line.contains("resolver=\(Self.resolver):53"), "\(line)")
            // Another address: the expectation fails.
            await resolver?.stop()
            resolver = try await wire.resolver(["host-record=api.wire.test,192.0.2.99"])
            let other = try await started.waitFor("named", reason: "unexpected_answer", fault: "dns")
            #expect((other["detail"] as? String)?.contains("192.0.2.99") == true, "\(other)")
            try await started.waitFor("hosts", reason: nil)
            // Behind the loss rule, half the queries dropped at random: each lost one is a
            // timeout, the resolver's fault, and the next answered one brings the target back.
            try await NFTables.drop(in: wire.server, "udp dport 53", percent: 50)
            try await started.waitFor("named", reason: "timeout", timeout: .seconds(40))
            try await started.waitFor("named", reason: "unexpected_answer", timeout: .seconds(40))
            try await TestNamespace.runOffPool([
                TestNamespace.ipPath, "netns", "exec", wire.server.name, "nft", "flush", "ruleset",
            ])
            // Every query dropped: a timeout, the resolver's fault (the gateway answers).
            try await NFTables.drop(in: wire.server, "udp dport 53")
            let silent = try await started.waitFor("named", reason: "timeout", fault: "dns")
            #expect(silent["detail"] as? String == "no answer from \(Self.resolver):53")
            try await TestNamespace.runOffPool([
                TestNamespace.ipPath, "netns", "exec", wire.server.name, "nft", "flush", "ruleset",
            ])
            try await started.waitFor("named", reason: "unexpected_answer")
            // Stopped: the port unreachable comes back, refused at once.
            await resolver?.stop()
            let refused = try await started.waitFor("named", reason: "connection_refused", fault: "dns")
            #expect(refused["detail"] as? String == "nothing answers DNS at \(Self.resolver):53")
        } catch {
            Issue.record("\(error)")
        }
        await embedded?.stop()
        await daemon?.process.kill()
        await resolver?.stop()
        await wire.tearDown()
    }

    @Test(.timeLimit(.minutes(3)))
    func echoesTheirLossAndARoutersErrorOnAnOpenHost() async throws {
        let wire = try await Wire()
        var daemon: Daemon?
        var embedded: ChildProcess?
        do {
            try await wire.build(pingSockets: true)
            try await wire.server.ip("addr", "add", "\(Self.unreachable)/32", "dev", "lo")
            let targets = """
                  - name: gateway-ping
                    kind: icmp
                    host: \(Self.gateway)
                  - name: far
                    kind: icmp
                    host: \(Self.unreachable)
                    timeout: 4s
                    interval: 2s
                """
            // Either target answering is enough: the verdict is connected until every echo is lost.
            let started = try Daemon(wire, targets: targets, policy: "any")
            daemon = started
            let answered = try await started.waitFor("gateway-ping", reason: nil)
            let echoes = try #require(answered["echoes"] as? [String: Any])
            #expect(echoes["sent"] as? Int == 5 && echoes["received"] as? Int == 5, "\(echoes)")
            #expect((echoes["rtt_median_seconds"] as? Double ?? 0) > 0)
            // The far host answers first (the gateway holds its address), then is gone: the
            // gateway's host unreachable, logged as the target's move down.
            try await started.waitFor("far", reason: nil)
            try await wire.server.ip("addr", "del", "\(Self.unreachable)/32", "dev", "lo")
            let far = try await started.waitFor("far", reason: "destination_unreachable")
            #expect(far["reported_by"] as? String == Self.gateway)
            #expect(far["detail"] as? String == "host unreachable, from \(Self.gateway)")
            #expect(await started.status()?["state"] as? String == "connected", "gateway-ping answers")
            let logged = try await started.process.waitForLog(containing: "target far down: destination_unreachable")
            let line = logged.split(separator: "\n").first { $0.contains("target far down") } ?? ""
            #expect(
                line.contains("reported_by=\(Self.gateway)") && line.contains("echoes_sent=")
                    && line.contains("echoes_received=0"),
                "\(line)"
            )
            let text = try await reachctl(["--endpoint", started.socket, "status"]).output
            #expect(text.contains("5/5 echoes"), "\(text)")
            // The embedded engine (ReachKitEmbedded) on the same configuration says the same.
            let helper = try started.embedded(in: wire)
            embedded = helper
            _ = try await helper.waitForLine(timeout: .seconds(20)) {
                $0.contains("\"reported_by\":\"\(Self.gateway)\"")
                    && $0.contains("\"reason\":\"destination_unreachable\"")
                    && $0.contains("\"received\":5")
            }
            // Every echo dropped (100 % loss): disconnected, a timeout, and the gateway's fault (it
            // answers no echo either).
            try await NFTables.drop(in: wire.server, "icmp type echo-request")
            let lost = try await started.waitFor("gateway-ping", reason: "timeout", fault: "gateway")
            #expect((lost["echoes"] as? [String: Any])?["received"] as? Int == 0)
            #expect(await started.status()?["state"] as? String == "disconnected")
        } catch {
            Issue.record("\(error)")
        }
        await embedded?.stop()
        await daemon?.process.kill()
        await wire.tearDown()
    }

    @Test(.timeLimit(.minutes(2)))
    func closedPingSocketsAreNotPermittedNeverANetworkFault() async throws {
        let wire = try await Wire()
        var daemon: Daemon?
        do {
            try await wire.build(pingSockets: false)
            let targets = """
                  - name: gateway-ping
                    kind: icmp
                    host: \(Self.gateway)
                """
            let started = try Daemon(wire, targets: targets)
            daemon = started
            let refused = try await started.waitFor("gateway-ping", reason: "not_permitted", fault: .some(nil))
            #expect((refused["detail"] as? String)?.contains("net.ipv4.ping_group_range") == true, "\(refused)")
            let said = try await started.process.waitForLog(containing: "ICMP echo is not allowed")
            // logfmt quotes the message, so its own quotes are escaped.
            #expect(
                said.contains(#"net.ipv4.ping_group_range is \"1 0\", which leaves out this process's group"#),
                "\(said)"
            )
            let check = try await runProgram(
                TestNamespace.ipPath,
                [
                    "netns", "exec", wire.host.name, BuiltProducts.reachd, "--check-config",
                    try #require(started.process.configurationPath),
                ]
            )
            #expect(check.status == 0 && check.output.hasSuffix("ok\n"), "the file is valid: \(check)")
            #expect(
                check.output.hasPrefix("warning: icmp target gateway-ping: ICMP echo is not allowed"),
                "\(check.output)"
            )
            // Opened, as the warning says: the next probe's echoes go out, without a restart.
            try await wire.host.sysctl("net.ipv4.ping_group_range=0 2147483647")
            try await started.waitFor("gateway-ping", reason: nil)
        } catch {
            Issue.record("\(error)")
        }
        await daemon?.process.kill()
        await wire.tearDown()
    }
}
