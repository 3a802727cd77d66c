import Foundation
import ReachTestRigs
import ReachTesting
import Testing

/// A reachd watching the URLs in a temporary targets file, and its endpoint.
private struct RunningReachd {
    let reachd: ReachdProcess
    let endpoint: String
    /// Holds the targets file; removed with this value.
    let directory: TemporaryDirectory

    init(watching url: String) async throws {
        directory = try TemporaryDirectory("reachctl")
        let targetsFile = directory.url.appending(path: "targets.txt")
        try "\(url)\n".write(to: targetsFile, atomically: true, encoding: .utf8)
        reachd = try ReachdProcess(["--targets-file", targetsFile.path], environment: ["REACHD_CONFIG": ""])
        endpoint = "http://127.0.0.1:\(try await reachd.waitForPort())"
    }

    func stop() async {
        await reachd.kill()
    }
}

/// A stand-in for a server on loopback: Python's HTTP server answering every GET with `handler`
/// (the body of `do_GET`, Python, with `self` the request), and the port it listens on.
private struct StandIn {
    let process: ChildProcess
    let port: Substring

    init(_ name: String, handler: String) async throws {
        let body = handler.split(separator: "\n").map { "        \($0)" }.joined(separator: "\n")
        process = try ChildProcess(
            name,
            executable: "/usr/bin/python3",
            arguments: [
                "-c",
                """
                import http.server, json
                class H(http.server.BaseHTTPRequestHandler):
                    def do_GET(self):
                \(body)
                    def log_message(self, *args):
                        pass
                s = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)
                print('port', s.server_address[1], flush=True)
                s.serve_forever()
                """,
            ]
        )
        port = try await process.waitForLine { $0.hasPrefix("port ") }.dropFirst("port ".count)
    }
}

@Suite("reachctl against a real reachd", .serialized)
struct ReachctlProcessTests {
    @Test func anAbsurdTimeoutIsAUsageErrorNotACrash() async throws {
        for timeout in ["1e16", "99999999999999h", "5 fortnights"] {
            let run = try await reachctl(["--endpoint", "http://127.0.0.1:1", "wait-online", "--timeout", timeout])
            #expect(run.status == 64, "EX_USAGE for \(timeout): \(run.errors)")
            #expect(run.errors.contains("invalid for '--timeout"), "\(run.errors)")
        }
    }

    @Test func aRefusedTargetReadsDisconnectedWithExit1() async throws {
        let daemon = try await RunningReachd(watching: "http://127.0.0.1:1/api/v1/health")

        let check = try await reachctl(["--endpoint", daemon.endpoint, "check"])
        #expect(check.status == 1, "\(check.errors)")
        #expect(check.output.hasPrefix("disconnected: connection_refused (target target-1)\n"), "\(check.output)")

        let status = try await reachctl(["--endpoint", daemon.endpoint, "status"])
        #expect(status.status == 1, "\(status.errors)")
        let lines = status.output.split(separator: "\n")
        #expect(lines.first == "disconnected: connection_refused (target target-1)")
        // In our words, from the reason table: nothing of NIO's "Connection refused) (errno: 111)".
        #expect(
            lines.dropFirst().first == "  target target-1: connection refused (in the connect phase)",
            "\(status.output)"
        )
        #expect(
            lines.contains { $0.hasSuffix("unhealthy  connection_refused in connect: connection refused") },
            "\(status.output)"
        )
        // Refused is an answer: the path works, so it is the server's fault.
        #expect(
            lines.dropFirst(2).first == "fault:      server — The server is not responding — your network is fine.",
            "\(status.output)"
        )
        #expect(lines.contains { $0.hasPrefix("since:") })
        #expect(lines.contains { $0.hasPrefix("interfaces:") })
        #expect(
            lines.contains {
                $0.contains("target-1") && $0.contains("http") && $0.contains("unhealthy")
                    && $0.contains("connection_refused in connect")
            }
        )

        let json = try await reachctl(["status", "--json", "--endpoint", daemon.endpoint])
        #expect(json.status == 1)
        let document = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
        #expect(document?["state"] as? String == "disconnected")
        #expect(document?["reason"] as? String == "connection_refused")
        #expect(document?["reason_detail"] as? String == "target target-1: connection refused (in the connect phase)")
        #expect(((document?["targets"] as? [[String: Any]])?.first?["detail"]) as? String == "connection refused")

        let started = ContinuousClock.now
        let wait = try await reachctl(["--endpoint", daemon.endpoint, "wait-online", "--timeout", "1s"])
        #expect(wait.status == 1)
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(wait.errors.contains("not connected after 1s: disconnected: connection_refused"), "\(wait.errors)")

        await daemon.stop()
    }

    @Test func aHealthyTargetReadsConnectedWithExit0() async throws {
        let server = try await HealthServer()
        let daemon = try await RunningReachd(watching: server.url)

        // wait-online first: it must return as soon as reachd decides, before any explicit check.
        let wait = try await reachctl(["--endpoint", daemon.endpoint, "wait-online", "--timeout", "10s"])
        #expect(wait.status == 0, "\(wait.errors)")

        let check = try await reachctl(["--endpoint", daemon.endpoint, "check"])
        #expect(check.status == 0, "\(check.errors)")
        #expect(check.output.hasPrefix("connected (healthy)\n"), "\(check.output)")

        let status = try await reachctl(["--endpoint", daemon.endpoint, "status"])
        #expect(status.status == 0)
        #expect(
            status.output.split(separator: "\n").contains {
                $0.contains("target-1") && $0.contains("healthy") && $0.hasSuffix(" ms")
            },
            "\(status.output)"
        )

        let json = try await reachctl(["--endpoint", daemon.endpoint, "status", "--json"])
        #expect(json.status == 0)
        let document = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
        #expect(document?["state"] as? String == "connected")

        let quick = try await reachctl(["--endpoint", daemon.endpoint, "wait-online", "--timeout", "1s"])
        #expect(quick.status == 0)

        await daemon.stop()
    }

    @Test func behindACaptivePortalStatusSaysWhereToSignIn() async throws {
        // A portal's answer to the target's plain-HTTP probe: a redirect to its login page on another host.
        let portal = try await StandIn(
            "portal",
            handler:
                "self.send_response(302); self.send_header('Location', 'http://portal.test/login'); self.send_header('Content-Length', '0'); self.end_headers()"
        )
        let daemon = try await RunningReachd(watching: "http://127.0.0.1:\(portal.port)/api/v1/health")
        let check = try await reachctl(["--endpoint", daemon.endpoint, "check"])
        #expect(check.status == 1, "\(check.errors)")
        let lines = check.output.split(separator: "\n")
        #expect(lines.first?.hasPrefix("disconnected: captive_portal") == true, "\(check.output)")
        #expect(lines.contains("sign in:    http://portal.test/login (captive portal, redirect)"), "\(check.output)")
        let json = try await reachctl(["status", "--json", "--endpoint", daemon.endpoint])
        let document = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
        let described = document?["portal"] as? [String: Any]
        #expect(described?["user_portal_url"] as? String == "http://portal.test/login")
        #expect(described?["evidence"] as? String == "redirect")
        #expect(document?["target"] is NSNull, "the portal is the network's, not a target's")
        await daemon.stop()
        portal.process.signal(SIGKILL)
        await portal.process.waitForExit()
    }

    @Test func aClosedEndpointExits2NamingIt() async throws {
        let endpoint = "http://127.0.0.1:1"
        for command in [["status"], ["status", "--json"], ["check"], ["watch"]] {
            let run = try await reachctl(["--endpoint", endpoint] + command)
            #expect(run.status == 2, "\(command)")
            #expect(
                run.errors.contains("cannot reach reachd at http://127.0.0.1:1: connection refused"),
                "\(command): \(run.errors)"
            )
            #expect(run.output.isEmpty)
        }
        // As the configuration writes durations (in any case), or a bare number of seconds.
        for timeout in ["500ms", "0.5S", "0.5"] {
            let started = ContinuousClock.now
            let wait = try await reachctl(["--endpoint", endpoint, "wait-online", "--timeout", timeout])
            #expect(wait.status == 2, "\(timeout): \(wait.errors)")
            #expect(ContinuousClock.now - started < .seconds(3))
        }
    }

    @Test func theEndpointComesFromTheEnvironment() async throws {
        let run = try await reachctl(["status"], environment: ["REACHD_ENDPOINT": "http://127.0.0.1:1"])
        #expect(run.status == 2)
        #expect(run.errors.contains("http://127.0.0.1:1"))
    }

    @Test func aBadDurationIsAUsageError() async throws {
        let run = try await reachctl(["wait-online", "--timeout", "1x"])
        #expect(run.status == 64)
        #expect(run.errors.contains("--timeout"))
    }

    @Test func theTokenFileSuppliesTheBearerToken() async throws {
        let directory = try TemporaryDirectory("reachctl-token")
        let token = directory.url.appending(path: "token")
        try "s3cret-token\n".write(to: token, atomically: true, encoding: .utf8)
        let config = directory.url.appending(path: "reachd.yaml")
        try "server:\n  base_url: http://127.0.0.1:1\napi:\n  bearer_token_file: \(token.path)\n".write(
            to: config,
            atomically: true,
            encoding: .utf8
        )
        let reachd = try ReachdProcess(["--config", config.path])
        let endpoint = "http://127.0.0.1:\(try await reachd.waitForPort())"

        let refused = try await reachctl(["--endpoint", endpoint, "status"])
        #expect(refused.status == 2)
        #expect(refused.errors.contains("401"), "\(refused.errors)")
        let allowed = try await reachctl(["--endpoint", endpoint, "--token-file", token.path, "status", "--json"])
        #expect(allowed.status == 1, "\(allowed.errors)")
        #expect(allowed.output.contains("\"state\""))

        await reachd.kill()
    }

    @Test func theStatusAPIAnswersOnAUnixSocket() async throws {
        let directory = try TemporaryDirectory("sock")
        let socket = "\(directory)/reachd.sock"
        let config = directory.url.appending(path: "reachd.yaml")
        try "server:\n  base_url: http://127.0.0.1:1\nsocket: \(socket)\n".write(
            to: config,
            atomically: true,
            encoding: .utf8
        )
        let reachd = try ReachdProcess(["--config", config.path])
        _ = try await reachd.waitForLog(containing: "listening on socket path")
        let run = try await reachctl(["--endpoint", socket, "status", "--json"])
        #expect(run.status == 1, "disconnected: nothing listens on port 1; \(run.errors)")
        #expect(run.output.contains("\"connection_refused\""), "\(run.output)")
        await reachd.kill()
    }

    @Test func waitOnlineResumesAfterTheLastEventItSaw() async throws {
        // Stands in for reachd: one verdict event (id 7) then the end of the stream. It says
        // connected only to a client that resumes after event 7; any other, disconnected again.
        let server = try await StandIn(
            "resumable stream",
            handler: """
                last = self.headers.get('Last-Event-ID')
                print('last-event-id', last, flush=True)
                state = 'connected' if last == '7' else 'disconnected'
                document = {'state': state, 'reason': 'healthy' if last == '7' else 'no_link', 'reason_detail': '',
                    'since': '2027-01-15T08:00:00.000Z', 'likely_connected': False, 'sequence': 7, 'reset': False,
                    'version': '0', 'usable_interfaces': [], 'targets': []}
                body = ('id: 7\\nevent: verdict\\ndata: ' + json.dumps(document) + '\\n\\n').encode()
                self.send_response(200)
                self.send_header('Content-Type', 'text/event-stream')
                self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                """
        )
        defer { server.process.signal(SIGKILL) }
        let wait = try await reachctl([
            "--endpoint", "http://127.0.0.1:\(server.port)", "wait-online", "--timeout", "10s",
        ])
        #expect(wait.status == 0, "\(wait.errors)")
        let requests = try await waitFor("both requests logged") {
            let logged = server.process.output.filter { $0.hasPrefix("last-event-id") }
            return logged.count >= 2 ? logged : nil
        }
        #expect(requests == ["last-event-id None", "last-event-id 7"])
    }

    @Test func watchPrintsTheVerdictThenExits3WhenReachdDies() async throws {
        let daemon = try await RunningReachd(watching: "http://127.0.0.1:1/api/v1/health")
        let watch = try ChildProcess(
            "reachctl watch",
            executable: BuiltProducts.reachctl,
            arguments: ["--endpoint", daemon.endpoint, "watch"]
        )
        defer { watch.signal(SIGKILL) }
        let first = try await watch.waitForLine { _ in true }
        let fields = first.split(separator: "  ")
        #expect(fields.count >= 4, "\(first)")
        #expect(fields.dropFirst().first == "unknown" || fields.dropFirst().first == "disconnected", "\(first)")
        #expect(fields.dropFirst(3).first?.hasPrefix("#") == true, "\(first)")

        await daemon.stop()
        let result = await watch.finish(timeout: .seconds(10))
        #expect(result.status == 3, "\(result.errors)")
        #expect(result.errors.contains(daemon.endpoint))
    }

    @Test func watchGivesUpOnAnEndpointThatStreamsOneEndlessLine() async throws {
        let server = try await StandIn(
            "endless stream",
            handler: """
                self.send_response(200)
                self.send_header('Content-Type', 'text/event-stream')
                self.end_headers()
                try:
                    while True:
                        self.wfile.write(b'data: ' + b'a' * 65536)
                except OSError:
                    pass
                """
        )
        defer { server.process.signal(SIGKILL) }
        let run = try await reachctl(["--endpoint", "http://127.0.0.1:\(server.port)", "watch"], timeout: .seconds(20))
        #expect(run.status == 2, "no event ever came: as unreachable; \(run.errors)")
        #expect(run.errors.contains("not reachd's event stream"), "\(run.errors)")
    }

    @Test func watchFollowKeepsRetryingWhileReachdIsAway() async throws {
        let daemon = try await RunningReachd(watching: "http://127.0.0.1:1/api/v1/health")
        let watch = try ChildProcess(
            "reachctl watch --follow",
            executable: BuiltProducts.reachctl,
            arguments: ["--endpoint", daemon.endpoint, "watch", "--follow"]
        )
        defer { watch.signal(SIGKILL) }
        try await watch.waitForLine { _ in true }
        await daemon.stop()
        // Three tries to reconnect, each refused and followed by the next: it keeps going while reachd is away.
        try await waitUntil("three reconnection attempts") {
            watch.errors.components(separatedBy: "reconnecting in").count > 3 || !watch.isRunning
        }
        #expect(watch.isRunning, "--follow keeps going while reachd is away: \(watch.errors)")
    }
}
