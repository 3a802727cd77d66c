import Foundation
import ReachTestRigs

/// One reachd of the matrix, running in the host namespace (`ip netns exec`, which execs: the
/// process is reachd itself), serving its API on a unix socket the test reaches from outside the
/// namespace, with hook directories that append one line per run to `hooks.log`.
final class MatrixDaemon: Sendable {
    let directory: String
    /// The network namespace it runs in.
    let namespace: TestNamespace
    private let reachd: ReachdProcess
    let logPath: String

    var configPath: String { "\(directory)/reachd.yaml" }
    var socketPath: String { "\(directory)/reachd.sock" }
    var processIdentifier: Int32 { reachd.processIdentifier }
    var isRunning: Bool { reachd.isRunning }
    var terminationStatus: Int32 { reachd.terminationStatus }

    /// The configuration every matrix reachd runs: an HTTP target by name with the default cadence
    /// (1 s) and deadline (2 s); a gRPC target polled only every 10 s but watched, so that what
    /// it reports within a second came through the watch stream; hooks in this directory; the
    /// portal server's check URL.
    static func configuration(directory: String) -> String {
        """
        socket: \(directory)/reachd.sock
        listen: 127.0.0.1:0
        targets:
          - name: server
            url: http://\(MatrixNetwork.serverName):\(FaultServer.port)/health
          - name: grpc
            kind: grpc
            address: \(MatrixNetwork.grpcAddress):\(GRPCFaultServer.port)
            watch: true
            interval: 10s
        hooks:
          restored_dir: \(directory)/restored.d
          lost_dir: \(directory)/lost.d
        captive_portal:
          check_url: \(PortalServer.checkURL)
          expect_status: 204
        """
    }

    /// Writes the configuration and hooks (unless there) and starts reachd; `run` numbers its log.
    /// `systemBus` is where it hears logind's sleep signal.
    convenience init(directory: String, network: MatrixNetwork, run: Int, systemBus: String) async throws {
        try await self.init(
            directory: directory,
            namespace: network.host,
            configuration: Self.configuration(directory: directory),
            run: run,
            systemBus: systemBus
        )
    }

    /// Writes `configuration` and the hooks (unless there) and starts reachd in `namespace`.
    init(directory: String, namespace: TestNamespace, configuration: String, run: Int, systemBus: String?) async throws
    {
        self.directory = directory
        self.namespace = namespace
        logPath = "\(directory)/reachd-\(run).log"
        let files = FileManager.default
        if !files.fileExists(atPath: "\(directory)/reachd.yaml") {
            try configuration.write(toFile: "\(directory)/reachd.yaml", atomically: true, encoding: .utf8)
            for direction in ["restored", "lost"] {
                try files.createDirectory(
                    atPath: "\(directory)/\(direction).d",
                    withIntermediateDirectories: true,
                    attributes: [.posixPermissions: 0o755]
                )
                let hook = "\(directory)/\(direction).d/50-record"
                try await writeExecutable("#!/bin/sh\necho \(direction) >> \(directory)/hooks.log\n", to: hook)
            }
        }
        reachd = try ReachdProcess(
            ["--config", "\(directory)/reachd.yaml"],
            listen: nil,
            environment: systemBus.map { ["DBUS_SYSTEM_BUS_ADDRESS": $0] } ?? [:],
            namespace: namespace,
            log: logPath
        )
    }

    /// `configuration` with an HTTPS target `tls` first: the fault server's HTTPS port, its
    /// certificate (for `other.test`) trusted; `serverName` is what it is checked against (the
    /// URL's host, `server.test`, when `nil`: a name mismatch).
    func configuration(_ configuration: String, addingTLSTarget serverName: String?) -> String {
        configuration.replacingOccurrences(
            of: "targets:\n",
            with: """
                targets:
                  - name: tls
                    url: https://\(MatrixNetwork.serverName):\(FaultServer.tlsPort)/health
                    tls:
                      ca_file: \(directory)/other.pem
                \(serverName.map { "      server_name: \($0)\n" } ?? "")
                """
        )
    }

    var log: String { reachd.log }

    /// Waits until the log holds `text`.
    func waitForLog(_ text: String, timeout: Duration = .seconds(30)) async throws {
        try await reachd.waitForLog(containing: text, timeout: timeout)
    }

    /// Hook runs so far, by direction.
    var hookRuns: (restored: Int, lost: Int) {
        let lines =
            (FileManager.default.contents(atPath: "\(directory)/hooks.log")).map { String(decoding: $0, as: UTF8.self) }
            ?? ""
        let words = lines.split(separator: "\n")
        return (words.filter { $0 == "restored" }.count, words.filter { $0 == "lost" }.count)
    }

    /// reachd's peak resident set so far (`VmHWM`), in KiB.
    var peakResidentKiB: Int { statusKiB("VmHWM") }

    /// reachd's resident set now (`VmRSS`), in KiB.
    var residentKiB: Int { statusKiB("VmRSS") }

    /// A size from `/proc/PID/status`, in KiB (0 once reachd is gone).
    private func statusKiB(_ field: String) -> Int {
        guard let status = FileManager.default.contents(atPath: "/proc/\(processIdentifier)/status") else { return 0 }
        let line = String(decoding: status, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix(field + ":") }
        return line.flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") }
            ?? 0
    }

    func signal(_ signal: Int32) { reachd.signal(signal) }

    /// Waits for the exit (SIGKILL after `timeout`); returns how long it took.
    @discardableResult
    func waitForExit(timeout: Duration = .seconds(10)) async -> Duration {
        await reachd.waitForExit(timeout: timeout)
    }
}
