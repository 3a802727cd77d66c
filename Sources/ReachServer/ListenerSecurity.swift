import NIOCore
import NIOSSL
import ReachConfig
import ReachSupport
import Synchronization

/// What the status listener asks of a connection, from the web configuration file: the TLS
/// context a new connection's handshake uses, and the basic-auth users a request is checked
/// against. Both can be replaced while reachd runs (SIGHUP): connections made after that get the
/// new certificate and users, open ones keep what they were made with.
///
/// Whether the listener speaks TLS at all is fixed when it starts (``servesTLS``): a listener
/// that speaks TLS never answers plain HTTP, and one that does not never starts to.
package final class ListenerSecurity: Sendable {
    /// Whether connections speak TLS; set at start, for as long as the listener runs.
    package let servesTLS: Bool
    private let state: Mutex<State>

    private struct State: Sendable {
        var tls: ServerTLSContext?
        var users: [String: Secret]
    }

    /// Builds the TLS context the web configuration describes.
    ///
    /// - Throws: ``ReachConfig/ConfigurationError`` naming the web configuration file and the key
    ///   whose file TLS cannot use (a certificate it cannot read, a key that is not the certificate's).
    package init(_ web: WebConfiguration) throws(ConfigurationError) {
        let tls = try web.tls.map { tls throws(ConfigurationError) in try ServerTLSContext(tls, source: web.path) }
        servesTLS = tls != nil
        state = Mutex(State(tls: tls, users: web.basicAuthUsers))
    }

    /// Takes a reloaded web configuration: its users, and its TLS context when this listener
    /// speaks TLS and the new file still configures it (turning TLS on or off needs a restart).
    ///
    /// - Throws: ``ReachConfig/ConfigurationError`` as ``init(_:)``; nothing changes then.
    package func update(_ web: WebConfiguration?) throws(ConfigurationError) {
        let web = web ?? WebConfiguration(path: "")
        let tls: ServerTLSContext?
        if servesTLS, let settings = web.tls {
            tls = try ServerTLSContext(settings, source: web.path)
        } else {
            tls = nil
        }
        state.withLock { state in
            if let tls { state.tls = tls }
            state.users = web.basicAuthUsers
        }
    }

    /// The basic-auth users now; none when basic auth is off.
    package var users: [String: Secret] { state.withLock { $0.users } }

    /// A server TLS handler for a new connection, with the context in force now; `nil` when the
    /// listener speaks plain HTTP.
    func makeTLSHandler() -> NIOSSLServerHandler? {
        guard let tls = state.withLock({ $0.tls }) else { return nil }
        guard tls.acceptsAnyCertificate else { return NIOSSLServerHandler(context: tls.context) }
        // `RequestClientCert` and `RequireAnyClientCert`: a certificate is asked for but not verified.
        return NIOSSLServerHandler(
            context: tls.context,
            customVerificationCallback: { _, promise in promise.succeed(.certificateVerified) },
            configuration: .init()
        )
    }
}

/// One NIOSSL server context made from `tls_server_config`, and whether its client certificates
/// go unverified.
struct ServerTLSContext: Sendable {
    let context: NIOSSLContext
    let acceptsAnyCertificate: Bool

    init(_ settings: WebConfiguration.ServerTLS, source: String) throws(ConfigurationError) {
        func problem(_ key: String, _ message: String) -> ConfigurationError {
            ConfigurationError(problems: [
                ConfigurationProblem(source: source, keyPath: "tls_server_config.\(key)", message: message)
            ])
        }
        let texts = settings.contents + ["", "", ""]
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMBytes(Array(texts[0].utf8))
        } catch {
            throw problem("cert_file", "\(settings.certificateFile) holds no certificate TLS can use (\(error))")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(bytes: Array(texts[1].utf8), format: .pem)
        } catch {
            throw problem("key_file", "\(settings.keyFile) holds no private key TLS can use (\(error))")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) },
            privateKey: .privateKey(key)
        )
        configuration.minimumTLSVersion = settings.minimumVersion.nio
        configuration.maximumTLSVersion = settings.maximumVersion?.nio
        switch settings.clientAuth {
        case .noClientCert: configuration.certificateVerification = .none
        case .requestClientCert, .verifyClientCertIfGiven: configuration.certificateVerification = .optionalVerification
        case .requireAnyClientCert, .requireAndVerifyClientCert:
            configuration.certificateVerification = .noHostnameVerification
        }
        if let caFile = settings.clientCAFile {
            do {
                configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(texts[2].utf8)))
            } catch {
                throw problem("client_ca_file", "\(caFile) holds no certificate TLS can use (\(error))")
            }
            configuration.sendCANameList = true
        }
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw problem(
                "key_file",
                "\(settings.keyFile) and \(settings.certificateFile) cannot serve TLS together (is the key the certificate's?): \(error)"
            )
        }
        acceptsAnyCertificate =
            settings.clientAuth == .requestClientCert || settings.clientAuth == .requireAnyClientCert
    }
}

extension WebConfiguration.TLSVersion {
    var nio: NIOSSL.TLSVersion {
        switch self {
        case .tls10: .tlsv1
        case .tls11: .tlsv11
        case .tls12: .tlsv12
        case .tls13: .tlsv13
        }
    }
}
