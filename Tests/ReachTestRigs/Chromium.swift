import Foundation
import ReachPOSIX
import ReachTesting
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A headless Chromium (Debian's `chromium`) driven over the DevTools protocol through
/// `--remote-debugging-pipe`: JSON messages ended by NUL on descriptors 3 (to the browser) and 4
/// (from it). A pipe rather than a WebSocket: no port to pick or leak, no client library, and the
/// browser's end closes with the test.
///
/// The browser runs as root here, so without its sandbox (`--no-sandbox`), in a process group of
/// its own, with its profile, home and temporary files inside `directory`, and with every
/// background service that would reach the internet turned off. ``close()`` ends it and every
/// process it started.
package final class Chromium: Sendable {
    package struct Failed: Error, CustomStringConvertible {
        package var description: String
    }

    /// A DevTools answer's `result` object.
    package struct Result: @unchecked Sendable {
        package let object: [String: Any]
    }

    /// Where Debian installs it; `nil` when it is not installed.
    package static var executable: String? {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium") ? "/usr/bin/chromium" : nil
    }

    private let pid: pid_t
    private let toBrowser: Int32
    private let fromBrowser: Int32
    private let nextID = Atomic<Int>(1)
    private let pending = Mutex<[Int: CheckedContinuation<Result, any Error>]>([:])
    private let ended = Atomic<Bool>(false)

    /// Starts the browser with a window of `width`×`height` CSS pixels.
    package init(directory: TemporaryDirectory, width: Int = 1280, height: Int = 900) throws {
        let profile = directory.url.appending(path: "chromium").path
        try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
        let arguments = [
            "chromium", "--headless", "--no-sandbox", "--remote-debugging-pipe", "--user-data-dir=\(profile)",
            "--window-size=\(width),\(height)", "--no-first-run", "--no-default-browser-check", "--disable-gpu",
            "--disable-dev-shm-usage", "--disable-extensions", "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync", "--disable-default-apps", "--disable-domain-reliability", "--no-pings",
            "--metrics-recording-only",
            "--disable-client-side-phishing-detection", "--disable-features=Translate,OptimizationHints,MediaRouter",
            "--hide-scrollbars", "--mute-audio", "--force-color-profile=srgb", "about:blank",
        ]
        var environment = ProcessInfo.processInfo.environment
        // TMPDIR stays the test's, so that scripts/test-leftovers sees the browser's processes and files.
        for key in ["HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"] { environment[key] = profile }
        environment["DBUS_SESSION_BUS_ADDRESS"] = "disabled:"
        let (browserReads, testWrites) = try Self.highPipe()
        let (testReads, browserWrites) = try Self.highPipe()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, browserReads, 3)
        posix_spawn_file_actions_adddup2(&actions, browserWrites, 4)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(
            &actions,
            2,
            directory.url.appending(path: "chromium.log").path,
            O_WRONLY | O_CREAT | O_TRUNC,
            0o644
        )
        // The test process's other descriptors stay out of the browser: a pipe it inherited would
        // never reach its end while the browser runs (a child's stdin, another child's stdout).
        actions.closeEveryDescriptor(from: 5)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/usr/bin/chromium", &actions, &attributes, argv, envp)
        Foundation.close(browserReads)
        Foundation.close(browserWrites)
        guard spawned == 0 else {
            Foundation.close(testWrites)
            Foundation.close(testReads)
            throw Failed(description: "chromium did not start: errno \(spawned)")
        }
        self.pid = pid
        toBrowser = testWrites
        fromBrowser = testReads
        Thread { [self] in readMessages() }.start()
    }

    /// A pipe whose ends sit above the standard descriptors and 3 and 4, close-on-exec, so that
    /// only the two the spawn puts at 3 and 4 reach the browser.
    private static func highPipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        guard Glibc.pipe(&fds) == 0 else { throw Failed(description: "pipe: errno \(errno)") }
        let high = fds.map { fcntl($0, F_DUPFD_CLOEXEC, 10) }
        fds.forEach { Foundation.close($0) }
        return (high[0], high[1])
    }

    private func readMessages() {
        var pending = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fromBrowser, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            pending += buffer[0..<count]
            while let end = pending.firstIndex(of: 0) {
                let message = Data(pending[..<end])
                pending.removeSubrange(...end)
                deliver(message)
            }
        }
        ended.store(true, ordering: .releasing)
        let waiting = self.pending.withLock { pending in
            defer { pending.removeAll() }
            return Array(pending.values)
        }
        waiting.forEach { $0.resume(throwing: Failed(description: "chromium closed its DevTools pipe")) }
    }

    private func deliver(_ message: Data) {
        guard let object = try? JSONSerialization.jsonObject(with: message) as? [String: Any],
            let id = object["id"] as? Int
        else { return }
        guard let continuation = pending.withLock({ $0.removeValue(forKey: id) }) else { return }
        if let error = object["error"] as? [String: Any] {
            continuation.resume(throwing: Failed(description: "DevTools error: \(error)"))
        } else {
            continuation.resume(returning: Result(object: object["result"] as? [String: Any] ?? [:]))
        }
    }

    /// The longest a command may wait for its answer.
    static let answerLimit: Duration = .seconds(20)

    /// Sends one DevTools command (to the page `session` when given) and returns its result.
    @discardableResult
    package func send(
        _ method: String,
        _ parameters: [String: Any] = [:],
        session: String? = nil
    ) async throws -> Result {
        let id = nextID.add(1, ordering: .relaxed).oldValue
        var message: [String: Any] = ["id": id, "method": method, "params": parameters]
        if let session { message["sessionId"] = session }
        let bytes = try JSONSerialization.data(withJSONObject: message) + [0]
        return try await withCheckedThrowingContinuation { continuation in
            pending.withLock { $0[id] = continuation }
            guard !ended.load(ordering: .acquiring) else {
                pending.withLock { $0.removeValue(forKey: id) }?.resume(
                    throwing: Failed(description: "chromium has ended")
                )
                return
            }
            let written = bytes.withUnsafeBytes { write(toBrowser, $0.baseAddress, $0.count) }
            if written != bytes.count {
                pending.withLock { $0.removeValue(forKey: id) }?.resume(
                    throwing: Failed(description: "writing to chromium failed")
                )
                return
            }
            // A command the browser never answers fails the test instead of hanging it.
            Task { [self] in
                try? await Task.sleep(for: Self.answerLimit)  // a deadline, not synchronisation: answered commands are gone from `pending`
                pending.withLock { $0.removeValue(forKey: id) }?.resume(
                    throwing: Failed(description: "\(method): no answer in \(Self.answerLimit)")
                )
            }
        }
    }

    /// Runs `body` with a browser started in `directory`, and closes the browser after it, also when it throws.
    package static func with<Value: Sendable>(
        directory: TemporaryDirectory,
        width: Int = 1280,
        height: Int = 900,
        _ body: (Chromium) async throws -> Value
    ) async throws -> Value {
        let browser = try Chromium(directory: directory, width: width, height: height)
        do {
            let value = try await body(browser)
            await browser.close()
            return value
        } catch {
            await browser.close()
            throw error
        }
    }

    /// Opens a new tab and attaches to it.
    package func newPage() async throws -> DevToolsPage {
        let target = try await send("Target.createTarget", ["url": "about:blank"])
        guard let targetID = target.object["targetId"] as? String else {
            throw Failed(description: "no targetId in \(target.object)")
        }
        let attached = try await send("Target.attachToTarget", ["targetId": targetID, "flatten": true])
        guard let session = attached.object["sessionId"] as? String else {
            throw Failed(description: "no sessionId in \(attached.object)")
        }
        return DevToolsPage(browser: self, session: session)
    }

    /// Closes the browser, waits for it, and kills whatever of its process group is left.
    package func close() async {
        // Not awaited: a browser that never answers must not hold the test; the answer, or the
        // pipe's end, resumes the command on its own.
        Task { [self] in try? await send("Browser.close") }
        let pid = pid
        var status: Int32 = 0
        if (try? await waitUntil("chromium to exit") { waitpid(pid, &status, WNOHANG) != 0 }) == nil {
            kill(-pid, SIGKILL)
            _ = waitpid(pid, &status, 0)
        }
        kill(-pid, SIGKILL)
        Foundation.close(toBrowser)
        Foundation.close(fromBrowser)
    }
}
