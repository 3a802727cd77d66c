import Foundation
import ReachTesting

/// The one stand-in HTTP(S) server of the tests: `Servers/stand_in_server.py` as a child process,
/// a health endpoint that answers as the test says (a status and body, late, a redirect, a
/// captive portal's page or API answer, garbage, a stalled body, refused connections), switched
/// line by line while it runs, on loopback or in a network namespace.
///
/// ```swift
/// let server = try StandInServer(path: "/health")   // 200 `ok` on 127.0.0.1, a free port
/// try await server.waitUntilReady()
/// try await server.set("slow 3")                     // answers three seconds late from now
/// try await server.set("503")
/// ```
///
/// Every command `Servers/stand_in_server.py` lists works; ``set(_:timeout:)`` returns once the
/// server has applied it. Fixed paths (`/status/CODE`, `/slow/MS`, `/reset`, ...) answer as they
/// say whatever the mode, for tests that point a probe at one behaviour each.
package final class StandInServer: Sendable {
    private let child: ChildProcess

    /// Starts the server; ``waitUntilReady()`` waits until it listens.
    ///
    /// - Parameters:
    ///   - listen: Plain HTTP listeners, `HOST:PORT` (port 0: any free one).
    ///   - tlsListen: HTTPS listeners, with `certificate` or `selfSigned`.
    ///   - certificate: The PEM chain (leaf first) and key HTTPS presents.
    ///   - selfSigned: Makes a self-signed certificate for `name` in `directory` and presents it.
    ///   - dualStack: A listener on `::` takes IPv4 too.
    ///   - blackhole: A listener nobody answers on.
    ///   - path: The only path (besides the fixed ones) the mode answers; others get 404.
    ///   - everyPath: The mode answers every path, the fixed ones too: a captive portal answering
    ///     in every server's place.
    ///   - logRequests: Keeps every request's method, path and `Accept` (``requests``).
    ///   - mode: The command it starts with; `ok` (200 `ok`) by default.
    ///   - namespace: A network namespace to run it in (`ip netns exec`); the test's own when `nil`.
    package init(
        name: String = "stand-in-server",
        listen: [String] = ["127.0.0.1:0"],
        tlsListen: [String] = [],
        certificate: (certificate: String, key: String)? = nil,
        selfSigned: (directory: String, name: String)? = nil,
        dualStack: Bool = false,
        blackhole: [String] = [],
        path: String? = nil,
        everyPath: Bool = false,
        logRequests: Bool = false,
        mode: String? = nil,
        namespace: TestNamespace? = nil
    ) throws {
        var arguments = listen.flatMap { ["--listen", $0] } + tlsListen.flatMap { ["--tls-listen", $0] }
        if let certificate { arguments += ["--certificate", certificate.certificate, certificate.key] }
        if let selfSigned { arguments += ["--self-signed", selfSigned.directory, selfSigned.name] }
        if dualStack { arguments.append("--dual-stack") }
        arguments += blackhole.flatMap { ["--blackhole", $0] }
        if let path { arguments += ["--path", path] }
        if everyPath { arguments.append("--every-path") }
        if logRequests { arguments.append("--log-requests") }
        if let mode { arguments += ["--mode"] + mode.split(separator: " ").map(String.init) }
        let command = TestNamespace.command(
            ["/usr/bin/python3", "-u", StandInScripts.http] + arguments,
            in: namespace
        )
        child = try ChildProcess(name, executable: command.executable, arguments: command.arguments)
    }

    /// Waits until it listens on every address it was given.
    package func waitUntilReady() async throws {
        try await child.waitForLine(timeout: .seconds(30)) { $0 == "ready" }
    }

    /// The port of the first plain listener, once ready; 0 when there is none.
    package var port: Int { firstPort("listening") }
    /// The port of the first HTTPS listener, once ready; 0 when there is none.
    package var tlsPort: Int { firstPort("listening-tls") }
    /// The port of the blackhole (connections accepted by the kernel, never read); 0 when there is none.
    package var blackholePort: Int { firstPort("listening-blackhole") }
    /// The self-signed certificate it made (`selfSigned`), to trust in a test.
    package var certificateFile: String? {
        child.output.first { $0.hasPrefix("certificate ") }.map { String($0.dropFirst("certificate ".count)) }
    }

    private func firstPort(_ kind: String) -> Int {
        child.output.first { $0.hasPrefix(kind + " ") }.flatMap { Int($0.split(separator: ":").last ?? "") } ?? 0
    }

    /// `http://127.0.0.1:PORT` and `path`.
    package func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    package var processIdentifier: Int32 { child.processIdentifier }

    /// Applies `command` (a line of `Servers/stand_in_server.py`'s commands) and returns once the
    /// server says it has.
    package func set(_ command: String, timeout: Duration = .seconds(20)) async throws {
        let before = child.output.count
        try child.writeLine(command)
        let child = child
        do {
            try await waitUntil("\(child.name) to take \(command)", timeout: timeout) {
                child.output.dropFirst(before).contains("ack \(command)")
            }
        } catch is TimedOutWaiting {
            throw ChildProcess.Failed(description: "\(child.name) did not take \(command); it printed \(child.output)")
        }
    }

    /// Sends `command` without waiting for the server to apply it: for storms of changes.
    package func send(_ command: String) throws {
        try child.writeLine(command)
    }

    /// Every request so far, in order, as `METHOD PATH ACCEPT` (with `logRequests`).
    package var requests: [String] {
        child.output.filter { $0.hasPrefix("request ") }.map { String($0.dropFirst("request ".count)) }
    }

    /// Stops it (connections to it are refused from then on) and waits until it is gone.
    package func stop() async {
        child.closeInput()
        child.signal(SIGKILL)
        await child.waitForExit()
    }

    /// Kills it without waiting, for clean-up that cannot wait.
    package func kill() {
        child.signal(SIGKILL)
    }

    /// A safety net for a test that ends early: the server must not outlive it.
    deinit { child.signal(SIGKILL) }
}
