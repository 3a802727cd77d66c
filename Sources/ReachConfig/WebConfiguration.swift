import ReachSupport

/// TLS and HTTP basic auth for the status listener, read from a web configuration file in the
/// Prometheus exporter-toolkit format (`--web.config.file`, `api.web_config_file`).
///
/// The format is the one node_exporter and every exporter read, so an operator who scrapes a
/// fleet over HTTPS writes one file for all of them. reachd reads the file at start and again on
/// every SIGHUP: new connections get the new certificate and users.
package struct WebConfiguration: Sendable, Equatable {
    /// The file, as given: problems and logs name it.
    package var path: String
    /// `tls_server_config`; plain HTTP when `nil`.
    package var tls: ServerTLS?
    /// `basic_auth_users`: user name to bcrypt hash (`$2a$`, `$2b$` or `$2y$`, as `htpasswd -B` writes).
    package var basicAuthUsers: [String: Secret]

    package init(path: String, tls: ServerTLS? = nil, basicAuthUsers: [String: Secret] = [:]) {
        self.path = path
        self.tls = tls
        self.basicAuthUsers = basicAuthUsers
    }

    /// Whether every client must prove who it is, by a password or a verified certificate: what
    /// makes a listener reachable from other machines safe without the bearer token.
    package var authenticatesClients: Bool {
        !basicAuthUsers.isEmpty || tls?.clientAuth == .requireAndVerifyClientCert
    }

    /// `tls_server_config`: the listener's certificate, and what it asks of clients.
    package struct ServerTLS: Sendable, Equatable {
        /// `cert_file`, PEM, the server's certificate first then its chain; made absolute against
        /// the web configuration file's folder, as exporter-toolkit does.
        package var certificateFile: String
        /// `key_file`, PEM.
        package var keyFile: String
        /// `client_ca_file`: the CAs a client certificate is verified against.
        package var clientCAFile: String?
        /// `client_auth_type`.
        package var clientAuth: ClientAuth
        /// `min_version`; TLS 1.2 unless set, as exporter-toolkit.
        package var minimumVersion: TLSVersion
        /// `max_version`; the newest the library speaks unless set.
        package var maximumVersion: TLSVersion?
        /// The files' text when read: a reload that finds it changed serves the new certificate.
        package var contents: [String]

        package init(
            certificateFile: String,
            keyFile: String,
            clientCAFile: String? = nil,
            clientAuth: ClientAuth = .noClientCert,
            minimumVersion: TLSVersion = .tls12,
            maximumVersion: TLSVersion? = nil,
            contents: [String] = []
        ) {
            self.certificateFile = certificateFile
            self.keyFile = keyFile
            self.clientCAFile = clientCAFile
            self.clientAuth = clientAuth
            self.minimumVersion = minimumVersion
            self.maximumVersion = maximumVersion
            self.contents = contents
        }
    }

    /// `client_auth_type`, with Go's `tls.ClientAuthType` names, as exporter-toolkit spells them.
    package enum ClientAuth: String, Sendable, CaseIterable {
        /// No certificate is asked for.
        case noClientCert = "NoClientCert"
        /// One is asked for, not required, not verified.
        case requestClientCert = "RequestClientCert"
        /// One is required, not verified.
        case requireAnyClientCert = "RequireAnyClientCert"
        /// One is asked for, and verified against `client_ca_file` when given.
        case verifyClientCertIfGiven = "VerifyClientCertIfGiven"
        /// One is required and verified against `client_ca_file`: mutual TLS.
        case requireAndVerifyClientCert = "RequireAndVerifyClientCert"

        /// Whether a presented certificate is checked against `client_ca_file`.
        package var verifies: Bool { self == .verifyClientCertIfGiven || self == .requireAndVerifyClientCert }
    }

    /// `min_version` and `max_version`.
    package enum TLSVersion: String, Sendable, CaseIterable, Comparable {
        case tls10 = "TLS10"
        case tls11 = "TLS11"
        case tls12 = "TLS12"
        case tls13 = "TLS13"

        package static func < (a: TLSVersion, b: TLSVersion) -> Bool {
            allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
        }
    }
}
