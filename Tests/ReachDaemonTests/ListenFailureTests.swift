import Foundation
import ReachCore
import ReachDaemon
import ReachPOSIX
import ReachSupport
import ReachTestRigs
import Testing

/// An address reachd cannot listen on stops it at start, before it claims to run, with one
/// sentence naming the address, the reason and the configuration key, and exit status 69.
@Suite("reachd cannot listen", .serialized)
struct ListenFailureTests {
    /// Runs reachd with `arguments` and a configuration file of one target and `configuration`,
    /// under a notify socket, until it exits; checks that it stopped before claiming to run and
    /// returns its standard error.
    private func failedStart(_ arguments: [String], configuration: String = "") async throws -> String {
        let socket = try NotifySocket()
        let file = FileManager.default.temporaryDirectory.appending(path: "reachd-listen-\(UUID()).yaml")
        try "server: { base_url: \"http://127.0.0.1:1\" }\n\(configuration)".write(
            to: file,
            atomically: true,
            encoding: .utf8
        )
        defer { try? FileManager.default.removeItem(at: file) }
        let reachd = try ReachdProcess(
            ["--config", file.path] + arguments,
            environment: ["NOTIFY_SOCKET": socket.path]
        )
        let result = await reachd.finish()
        let stderr = result.errors
        #expect(result.status == 69, "\(stderr)")
        #expect(!stderr.contains("msg=\"reachd running\""), "\(stderr)")
        #expect(!stderr.contains("disconnected"), "no verdict before the listeners are bound: \(stderr)")
        let messages = await socket.drain()
        #expect(!messages.contains { $0.contains("READY=1") }, "\(messages)")
        #expect(!stderr.contains("errno"), "\(stderr)")
        return stderr
    }

    @Test func aTakenPortStopsReachdBeforeItRuns() async throws {
        let taken = try LoopbackListener()
        let stderr = try await failedStart(["--listen", "127.0.0.1:\(taken.port)"])
        #expect(
            stderr.contains(
                "reachd: cannot listen on 127.0.0.1:\(taken.port): address already in use (is another reachd running? see \"listen\")\n"
            ),
            "\(stderr)"
        )
    }

    @Test func aSocketInAMissingDirectoryStopsReachdBeforeItRuns() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "reachd-missing-\(UUID())").path
        let stderr = try await failedStart([], configuration: "socket: \(directory)/reachd.sock\n")
        #expect(
            stderr.contains(
                "reachd: cannot listen on \(directory)/reachd.sock: no such file (the directory \(directory) does not exist; see \"socket\")\n"
            ),
            "\(stderr)"
        )
    }

    @Test func aTakenGRPCPortStopsReachdBeforeItRuns() async throws {
        let taken = try LoopbackListener()
        let stderr = try await failedStart([], configuration: "grpc_health: { listen: \"127.0.0.1:\(taken.port)\" }\n")
        #expect(
            stderr.contains(
                "reachd: cannot listen on 127.0.0.1:\(taken.port): address already in use (is another reachd running? see \"grpc_health.listen\")\n"
            ),
            "\(stderr)"
        )
    }

    @Test(arguments: [
        (
            ListenFailure.Address.tcp(HostPort(host: "127.0.0.1", port: 80)), "listen", EACCES,
            "cannot listen on 127.0.0.1:80: permission denied (ports below 1024 need the CAP_NET_BIND_SERVICE capability; see \"listen\")"
        ),
        (
            .tcp(HostPort(host: "192.0.2.7", port: 9780)), "listen", EADDRNOTAVAIL,
            "cannot listen on 192.0.2.7:9780: address not available on this machine (192.0.2.7 is not an address of this machine; see \"listen\")"
        ),
        (
            .tcp(HostPort(host: "::1", port: 9781)), "grpc_health.listen", EAFNOSUPPORT,
            "cannot listen on [::1]:9781: address family not supported (this machine does not have IPv6 enabled; see \"grpc_health.listen\")"
        ),
        (
            .unixSocket(path: "/run/reachd/reachd.sock"), "socket", EACCES,
            "cannot listen on /run/reachd/reachd.sock: permission denied (reachd may not create files in /run/reachd; see \"socket\")"
        ),
        (
            .unixSocket(path: "/tmp/" + String(repeating: "x", count: 120)), "socket", ENAMETOOLONG,
            "cannot listen on /tmp/\(String(repeating: "x", count: 120)): the path is too long (a unix socket's path has at most 107 bytes; see \"socket\")"
        ),
        (
            .unixSocket(path: "/tmp/plain-file"), "socket", ENOTSOCK,
            "cannot listen on /tmp/plain-file: not a socket (a file that is not a socket is in the way; see \"socket\")"
        ),
    ])
    func eachReasonHasAHintNamingTheKey(address: ListenFailure.Address, key: String, code: Int32, sentence: String) {
        #expect(
            ListenFailure(address: address, key: key, cause: SystemCallError("bind", code: code)).description
                == sentence
        )
    }
}
