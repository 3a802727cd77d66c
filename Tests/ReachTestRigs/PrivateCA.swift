import Foundation

/// A certificate authority of the test's own (openssl), and the server certificates it issues:
/// what an HTTPS server on loopback presents so that a client trusting the CA verifies it.
package struct PrivateCA: Sendable {
    /// The CA's certificate, PEM: what a client's `ca_file` names.
    package let certificate: String
    private let key: String
    private let directory: String

    /// Makes the CA's key and self-signed certificate in `directory`.
    package static func make(in directory: String) async throws -> PrivateCA {
        let ca = PrivateCA(certificate: "\(directory)/ca.pem", key: "\(directory)/ca.key", directory: directory)
        try await openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", ca.key,
            "-out",
            ca.certificate, "-days", "30", "-subj", "/CN=reachd test CA",
        ])
        return ca
    }

    /// Issues a certificate for `name` (and 127.0.0.1) valid for `days` (a negative number: expired
    /// that many days ago); returns its certificate and key files.
    /// - Parameter subject: The subject in openssl's form; `/CN=name` by default.
    package func issue(
        name: String,
        days: Int = 30,
        subject: String? = nil
    ) async throws -> (certificate: String, key: String) {
        let (certificate, key, request, extensions) = (
            "\(directory)/\(name).pem", "\(directory)/\(name).key", "\(directory)/\(name).csr",
            "\(directory)/\(name).ext"
        )
        try "subjectAltName=DNS:\(name),IP:127.0.0.1\n".write(toFile: extensions, atomically: true, encoding: .utf8)
        try await Self.openssl([
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out",
            request, "-subj", subject ?? "/CN=\(name)",
        ])
        try await Self.openssl([
            "x509", "-req", "-in", request, "-CA", self.certificate, "-CAkey", self.key, "-CAcreateserial", "-out",
            certificate,
            "-days", "\(days)", "-extfile", extensions,
        ])
        return (certificate, key)
    }

    /// When the certificate in the PEM file `certificate` expires, as openssl reads it.
    package static func notAfter(of certificate: String) async throws -> Date {
        let result = try await runProgram(
            "/usr/bin/openssl",
            ["x509", "-in", certificate, "-noout", "-enddate", "-dateopt", "iso_8601"]
        )
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss'Z'"
        let text = result.output.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(
            of: "notAfter=",
            with: ""
        )
        guard result.status == 0, let date = formatter.date(from: text) else {
            throw ChildProcess.Failed(
                description: "openssl cannot read the expiry of \(certificate): \(result.output)\(result.errors)"
            )
        }
        return date
    }

    private static func openssl(_ arguments: [String]) async throws {
        let result = try await runProgram("/usr/bin/openssl", arguments)
        guard result.status == 0 else {
            throw ChildProcess.Failed(description: "openssl \(arguments.first ?? "") failed: \(result.errors)")
        }
    }
}
