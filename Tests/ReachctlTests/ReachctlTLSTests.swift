import Foundation
import ReachTestRigs
import ReachTesting
import Testing

@Suite("reachctl against a reachd serving HTTPS with basic auth", .serialized)
struct ReachctlTLSTests {
    @Test func itTrustsTheGivenCAAndSendsTheUserAndThePasswordFromAFile() async throws {
        let directory = try TemporaryDirectory("reachctl-tls")
        let server = try await HealthServer()
        defer { server.kill() }
        let web = try await WebConfigFile.make(in: directory.path)
        let reachd = try ReachdProcess(
            configuration: "targets:\n  - name: api\n    url: \(server.url)\n",
            in: directory.path,
            arguments: ["--web.config.file", web.path]
        )
        defer { reachd.signal(SIGKILL) }
        let endpoint = "https://127.0.0.1:\(try await reachd.waitForPort())"
        let passwordFile = directory.url.appending(path: "password").path
        try "scrape-s3cret\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        let wrongPasswordFile = directory.url.appending(path: "wrong-password").path
        try "wrong\n".write(toFile: wrongPasswordFile, atomically: true, encoding: .utf8)

        try await waitUntil("reachctl over HTTPS to say connected", timeout: .seconds(20)) {
            let run = try await reachctl([
                "--endpoint", endpoint, "--cacert", web.ca.certificate, "--user", "prometheus", "--password-file",
                passwordFile, "status",
            ])
            return run.status == 0 && run.output.contains("connected")
        }
        // The event stream, over the same TLS.
        let watch = try await reachctl(
            [
                "--endpoint", endpoint, "--cacert", web.ca.certificate, "--user", "prometheus", "--password-file",
                passwordFile, "wait-online", "--timeout", "5s",
            ])
        #expect(watch.status == 0, "\(watch.output)\(watch.errors)")

        let wrong = try await reachctl([
            "--endpoint", endpoint, "--cacert", web.ca.certificate, "--user", "prometheus", "--password-file",
            wrongPasswordFile, "status",
        ])
        #expect(wrong.status == 2 && wrong.errors.contains("401"), "\(wrong.errors)")
        // Without the CA, the system's store does not know reachd's certificate.
        let untrusted = try await reachctl([
            "--endpoint", endpoint, "--user", "prometheus", "--password-file", passwordFile, "status",
        ])
        #expect(untrusted.status == 2 && untrusted.errors.contains("certificate"), "\(untrusted.errors)")
    }
}
