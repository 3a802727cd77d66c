import Foundation

/// A certificate authority of the test's own (openssl), and the server certificates it issues:
/// what an HTTPS server on loopback presents so that a client trusting the CA verifies it.
public struct PrivateCA: Sendable {
    /// The CA's certificate, PEM: what a client's `ca_file` names.
    public let certificate: String
    private let key: String
    private let directory: String

    /// Makes the CA's key and self-signed certificate in `directory`.
    public static func make(in directory: String) async throws -> PrivateCA {
        let ca = PrivateCA(certificate: "\(directory)/ca.pem", key: "\(directory)/ca.key", directory: directory)
        try await openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", ca.key, "-out",
            ca.certificate, "-days", "30", "-subj", "/CN=reachd test CA",
        ])
        return ca
    }

    /// Issues a certificate for `name` (and 127.0.0.1) valid for `days`; returns its certificate and key files.
    public func issue(name: String, days: Int = 30) async throws -> (certificate: String, key: String) {
        let (certificate, key, request, extensions) = (
            "\(directory)/\(name).pem", "\(directory)/\(name).key", "\(directory)/\(name).csr", "\(directory)/\(name).ext"
        )
        try "subjectAltName=DNS:\(name),IP:127.0.0.1\n".write(toFile: extensions, atomically: true, encoding: .utf8)
        try await Self.openssl([
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", request, "-subj", "/CN=\(name)",
        ])
        try await Self.openssl([
            "x509", "-req", "-in", request, "-CA", self.certificate, "-CAkey", self.key, "-CAcreateserial", "-out", certificate,
            "-days", "\(days)", "-extfile", extensions,
        ])
        return (certificate, key)
    }

    private static func openssl(_ arguments: [String]) async throws {
        let result = try await runProgram("/usr/bin/openssl", arguments)
        guard result.status == 0 else { throw ChildProcess.Failed(description: "openssl \(arguments.first ?? "") failed: \(result.errors)") }
    }
}
