import Foundation

/// An exporter-toolkit web configuration file for reachd's listener (`--web.config.file`): a
/// server certificate from a CA of the test's own (``PrivateCA``) and basic-auth users whose
/// bcrypt hashes `htpasswd` made (apache2-utils), not code of ours; and what a client needs to
/// talk to it.
package struct WebConfigFile: Sendable {
    /// The file to pass as `--web.config.file`.
    package let path: String
    /// The CA the server's (and a client's) certificate comes from: what a client trusts.
    package let ca: PrivateCA
    /// The server's certificate and key, for `127.0.0.1`.
    package let server: (certificate: String, key: String)
    private let directory: String

    /// Writes the CA, a server certificate and a web configuration with one user into `directory`.
    /// - Parameter clientAuth: `client_auth_type`; with it, `client_ca_file` is the test CA.
    package static func make(
        in directory: String,
        users: [String: String] = ["prometheus": "scrape-s3cret"],
        clientAuth: String? = nil
    ) async throws -> WebConfigFile {
        let ca = try await PrivateCA.make(in: directory)
        let file = WebConfigFile(
            path: "\(directory)/web.yml",
            ca: ca,
            server: try await ca.issue(name: "reachd"),
            directory: directory
        )
        try await file.write(users: users, clientAuth: clientAuth)
        return file
    }

    /// Writes the file anew, as an operator would before a SIGHUP.
    package func write(users: [String: String], clientAuth: String? = nil) async throws {
        var text = "tls_server_config:\n  cert_file: \(server.certificate)\n  key_file: \(server.key)\n"
        if let clientAuth { text += "  client_auth_type: \(clientAuth)\n  client_ca_file: \(ca.certificate)\n" }
        if !users.isEmpty {
            text += "basic_auth_users:\n"
            for (user, password) in users.sorted(by: { $0.key < $1.key }) {
                text += "  \(user): \(try await Self.bcryptHash(password))\n"
            }
        }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// A client certificate and key from the same CA, for mutual TLS.
    package func clientCertificate(name: String = "client") async throws -> (certificate: String, key: String) {
        try await ca.issue(name: name)
    }

    /// `password`'s bcrypt hash (`$2y$`, cost 10), as `htpasswd -nbBC 10` writes it.
    package static func bcryptHash(_ password: String) async throws -> String {
        let result = try await runProgram("/usr/bin/htpasswd", ["-nbBC", "10", "", password])
        let hash = result.output.trimmingCharacters(in: .whitespacesAndNewlines).drop { $0 == ":" }
        guard result.status == 0, hash.hasPrefix("$2y$") else {
            throw ChildProcess.Failed(
                description: "htpasswd (Debian package apache2-utils) made no bcrypt hash: \(result.errors)"
            )
        }
        return String(hash)
    }

    /// Runs curl with these arguments and `--cacert` for the test CA; returns what it said.
    package func curl(_ arguments: [String]) async throws -> ProgramResult {
        try await runProgram(
            "/usr/bin/curl",
            ["--silent", "--show-error", "--max-time", "10", "--cacert", ca.certificate] + arguments
        )
    }
}
