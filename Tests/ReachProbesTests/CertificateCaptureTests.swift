import Foundation
import Logging
import ReachCore
import ReachProbes
import ReachSupport
import ReachTestRigs
import ReachTesting
import Testing

/// What an HTTPS probe keeps of the chain a real server presents (python3's `ssl` on loopback,
/// certificates made here with openssl): the earliest `notAfter`, the leaf's subject and issuer,
/// whether the chain verified or not.
@Suite("Certificates HTTPS probes see", .serialized)
struct CertificateCaptureTests {
    let prober = HTTPProber(logger: Logger(label: "test"))

    func probe(_ url: String, caFile: String?) async -> ProbeResult {
        let check = HTTPCheck(
            url: url,
            endpoint: HostPort(
                host: "127.0.0.1",
                port: Int(url.split(separator: ":")[2].prefix { $0.isNumber }) ?? 443
            ),
            tls: TLSSettings(caFile: caFile)
        )
        let result = await prober.probe(ProbeTarget(name: "secure", check: .http(check), timeout: .seconds(10)))
        print(
            "\(url): \(result.failure.map { "\($0.reason) in \($0.phase?.rawValue ?? "-"): \($0.detail ?? "")" } ?? "ok"), \(String(describing: result.certificate))"
        )
        return result
    }

    /// A server presenting a certificate for `name` valid for `days` from a fresh CA (valid 30 days).
    func server(
        _ name: String,
        days: Int,
        in directory: TemporaryDirectory
    ) async throws -> (server: LoopbackHTTPSServer, ca: PrivateCA, notAfter: Date) {
        let ca = try await PrivateCA.make(in: directory.path)
        let issued = try await ca.issue(name: name, days: days)
        return (
            try await LoopbackHTTPSServer(certificate: issued), ca, try await PrivateCA.notAfter(of: issued.certificate)
        )
    }

    func expectDate(_ certificate: ServerCertificate?, _ date: Date, sourceLocation: SourceLocation = #_sourceLocation)
    {
        #expect(
            certificate?.notAfter.sinceEpoch == .seconds(Int64(date.timeIntervalSince1970)),
            sourceLocation: sourceLocation
        )
    }

    @Test func aVerifiedChainGivesTheLeafsExpiryAndNames() async throws {
        let directory = try TemporaryDirectory("certs-verified")
        let (server, ca, notAfter) = try await server("api.test", days: 3, in: directory)
        let result = await probe(server.url, caFile: ca.certificate)
        #expect(result.isSuccess)
        expectDate(result.certificate, notAfter)
        #expect(result.certificate?.subject == "CN=api.test")
        #expect(result.certificate?.issuer == "CN=reachd test CA")
        let days = (notAfter.timeIntervalSinceNow / 86_400).rounded()
        #expect(days == 3, "openssl made it valid for 3 days")
        await server.stop()
    }

    @Test func theEarliestExpiryOfTheChainWinsEvenWhenItIsNotTheLeafs() async throws {
        let directory = try TemporaryDirectory("certs-earliest")
        // The leaf outlives its CA (30 days): the chain breaks when the CA expires.
        let (server, ca, leafNotAfter) = try await server("api.test", days: 60, in: directory)
        let caNotAfter = try await PrivateCA.notAfter(of: ca.certificate)
        #expect(caNotAfter < leafNotAfter)
        let result = await probe(server.url, caFile: ca.certificate)
        #expect(result.isSuccess)
        expectDate(result.certificate, caNotAfter)
        #expect(result.certificate?.subject == "CN=api.test", "the names are the leaf's")
        await server.stop()
    }

    @Test func anExpiredCertificateIsATLSFailureWithItsDateKnown() async throws {
        let directory = try TemporaryDirectory("certs-expired")
        let (server, ca, notAfter) = try await server("old.test", days: -1, in: directory)
        #expect(notAfter < Date(), "openssl made it expire yesterday")
        let result = await probe(server.url, caFile: ca.certificate)
        #expect(result.failure?.reason == .tlsFailure)
        #expect(result.failure?.phase == .tls)
        #expect(result.failure?.detail == "certificate has expired")
        expectDate(result.certificate, notAfter)
        #expect(result.certificate?.subject == "CN=old.test")
        await server.stop()
    }

    @Test func anUntrustedCertificateFailsButIsStillSeen() async throws {
        let directory = try TemporaryDirectory("certs-untrusted")
        let (server, _, notAfter) = try await server("api.test", days: 3, in: directory)
        let untrusted = await probe(server.url, caFile: nil)
        #expect(untrusted.failure?.reason == .tlsFailure)
        #expect(untrusted.failure?.detail == "certificate verify failed", "unknown, not expired")
        expectDate(untrusted.certificate, notAfter)
        #expect(untrusted.certificate?.subject == "CN=api.test", "the leaf, though its issuer is unknown")
        #expect(untrusted.certificate?.issuer == "CN=reachd test CA")
        await server.stop()
    }

    @Test func plainHTTPHasNoCertificate() async throws {
        let server = try await HealthServer()
        let check = HTTPCheck(url: server.url, endpoint: HostPort(host: "127.0.0.1", port: server.port))
        let result = await prober.probe(ProbeTarget(name: "plain", check: .http(check), timeout: .seconds(10)))
        #expect(result.isSuccess)
        #expect(result.certificate == nil)
        await server.stop()
    }

    @Test func namesReadAsRFC4514MostSpecificFirst() async throws {
        let directory = try TemporaryDirectory("certs-names")
        let ca = try await PrivateCA.make(in: directory.path)
        let issued = try await ca.issue(name: "api.test", days: 3, subject: "/C=DE/O=Example, Inc./OU=Ops/CN=api.test")
        let server = try await LoopbackHTTPSServer(certificate: issued)
        let result = await probe(server.url, caFile: ca.certificate)
        #expect(result.isSuccess)
        #expect(result.certificate?.subject == #"CN=api.test, OU=Ops, O=Example\, Inc., C=DE"#)
        await server.stop()
    }
}
