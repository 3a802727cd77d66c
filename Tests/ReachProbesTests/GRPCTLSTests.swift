import Foundation
import Logging
import ReachCore
import ReachProbes
import ReachSupport
import ReachTestRigs
import ReachTesting
import Testing

/// gRPC health over TLS against grpcio's health server with a certificate made here with openssl:
/// verified as an HTTPS target is, and the chain the server presented kept whether it verified
/// or not.
@Suite("gRPC health probe over TLS", .serialized, .timeLimit(.minutes(2)))
struct GRPCTLSTests {
    let prober = GRPCHealthProber(logger: Logger(label: "grpc-tls-test"))

    func probe(port: Int, tls: TLSSettings?, watch: Bool = false) async -> ProbeResult {
        let check = GRPCHealthCheck(endpoint: HostPort(host: "127.0.0.1", port: port), watch: watch, tls: tls)
        let result = await prober.probe(ProbeTarget(name: "grpc", check: .grpc(check), timeout: .seconds(15)))
        print(
            "grpc tls \(String(describing: tls)): \(result.failure.map { "\($0.reason) in \($0.phase?.rawValue ?? "-"): \($0.detail ?? "")" } ?? "ok"), \(String(describing: result.certificate))"
        )
        expectOurWords(result.failure)
        return result
    }

    /// grpcio serving over TLS with a certificate for `name` valid for `days`, from a fresh CA.
    func server(
        _ name: String,
        days: Int,
        in directory: TemporaryDirectory
    ) async throws -> (server: GRPCHealthServerProcess, ca: PrivateCA, notAfter: Date) {
        let ca = try await PrivateCA.make(in: directory.path)
        let issued = try await ca.issue(name: name, days: days)
        return (
            try await GRPCHealthServerProcess(tls: issued), ca, try await PrivateCA.notAfter(of: issued.certificate)
        )
    }

    @Test func aVerifiedServerIsHealthyAndItsCertificateKept() async throws {
        let directory = try TemporaryDirectory("grpc-tls")
        let (server, ca, notAfter) = try await server("grpc.test", days: 3, in: directory)
        defer { server.stop() }
        let result = await probe(port: server.port, tls: TLSSettings(caFile: ca.certificate))
        #expect(result.isSuccess)
        #expect(result.certificate?.notAfter.sinceEpoch == .seconds(Int64(notAfter.timeIntervalSince1970)))
        #expect(result.certificate?.subject == "CN=grpc.test")
        #expect(result.certificate?.issuer == "CN=reachd test CA")

        let byName = await probe(port: server.port, tls: TLSSettings(caFile: ca.certificate, serverName: "grpc.test"))
        #expect(byName.isSuccess, "SNI and the certificate's name")
    }

    @Test func anUntrustedOrExpiredCertificateIsATLSFailureWithItsDateKnown() async throws {
        let directory = try TemporaryDirectory("grpc-tls-bad")
        let (server, _, notAfter) = try await server("grpc.test", days: 3, in: directory)
        defer { server.stop() }
        let untrusted = await probe(port: server.port, tls: TLSSettings())
        #expect(untrusted.failure?.reason == .tlsFailure)
        #expect(untrusted.failure?.phase == .tls)
        #expect(untrusted.failure?.detail == "certificate verify failed")
        #expect(untrusted.certificate?.notAfter.sinceEpoch == .seconds(Int64(notAfter.timeIntervalSince1970)))

        let old = try TemporaryDirectory("grpc-tls-expired")
        let (expired, ca, expiredAt) = try await self.server("old.test", days: -1, in: old)
        defer { expired.stop() }
        let result = await probe(port: expired.port, tls: TLSSettings(caFile: ca.certificate))
        #expect(result.failure?.reason == .tlsFailure)
        #expect(result.failure?.detail == "certificate has expired")
        #expect(result.certificate?.notAfter.sinceEpoch == .seconds(Int64(expiredAt.timeIntervalSince1970)))
        #expect(result.certificate?.subject == "CN=old.test")
    }

    @Test func plaintextAndTLSDoNotMix() async throws {
        let directory = try TemporaryDirectory("grpc-tls-mix")
        let (secure, _, _) = try await server("grpc.test", days: 3, in: directory)
        defer { secure.stop() }
        let plaintextToTLS = await probe(port: secure.port, tls: nil)
        #expect(!plaintextToTLS.isSuccess)
        #expect(plaintextToTLS.certificate == nil)

        let plain = try await GRPCHealthServerProcess()
        defer { plain.stop() }
        let tlsToPlaintext = await probe(port: plain.port, tls: TLSSettings())
        #expect(tlsToPlaintext.failure?.reason == .tlsFailure)
        #expect(tlsToPlaintext.failure?.phase == .tls)
        #expect(tlsToPlaintext.certificate == nil)
    }

    @Test func aWatchOverTLSSeesTheServersStatus() async throws {
        let directory = try TemporaryDirectory("grpc-tls-watch")
        let (server, ca, _) = try await server("grpc.test", days: 3, in: directory)
        defer { server.stop() }
        let check = GRPCHealthCheck(
            endpoint: HostPort(host: "127.0.0.1", port: server.port),
            watch: true,
            tls: TLSSettings(caFile: ca.certificate)
        )
        let target = ProbeTarget(name: "grpc", check: .grpc(check), timeout: .seconds(15))
        let recorder = WatchRecorder()
        let watching = Task { await prober.watch(target, epoch: recorder.nextEpoch) { recorder.record($0, epoch: $1) } }
        defer { watching.cancel() }
        let serving = await recorder.first(from: 0, within: .seconds(10)) { $0.isSuccess }
        #expect(serving != nil, "the stream's first status")
        let mark = recorder.count
        try await server.send("not_serving")
        let pushed = await recorder.first(from: mark, within: .seconds(5)) { !$0.isSuccess }
        #expect(pushed?.result.failure?.reason == .notServing)
        #expect(pushed?.result.failure?.detail == "NOT_SERVING")
    }
}
