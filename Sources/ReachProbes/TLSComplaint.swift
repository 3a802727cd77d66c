import NIOSSL
import ReachCore
import ReachSupport

/// What the TLS layer said went wrong, in words: BoringSSL's reason (`CERTIFICATE_VERIFY_FAILED`
/// reads `certificate verify failed`) without NIOSSL's wrapping, the error's number, or the
/// source file that raised it; `nil` when it names nothing a person can act on.
enum TLSComplaint {
    /// A `tls_failure` in the `tls` phase with the error's words, when `error` is one of NIOSSL's.
    static func failure(_ error: any Error) -> ProbeFailure? {
        guard error is NIOSSLError || error is BoringSSLError || error is NIOSSLExtraError else { return nil }
        return ProbeFailure(.tlsFailure, phase: .tls, detail: words(error))
    }

    /// The words for an error of NIOSSL (`NIOSSLError`, `BoringSSLError`, `NIOSSLExtraError`).
    static func words(_ error: any Error) -> String? {
        switch error {
        case let error as NIOSSLError: words(error)
        case let error as BoringSSLError: words(error)
        case let error as NIOSSLExtraError: words(error)
        default: nil
        }
    }

    /// BoringSSL's only reason for a chain that did not verify is `certificate verify failed`.
    /// When the chain the server presented is past its `notAfter`, that is why: said in OpenSSL's
    /// words for it, which curl and `openssl s_client` print too.
    static func explained(
        _ failure: ProbeFailure,
        presenting certificate: ServerCertificate,
        now: WallTime
    ) -> ProbeFailure {
        guard failure.reason == .tlsFailure, failure.detail == "certificate verify failed", certificate.notAfter < now
        else { return failure }
        var explained = failure
        explained.detail = "certificate has expired"
        return explained
    }

    private static func words(_ error: NIOSSLError) -> String? {
        switch error {
        case .handshakeFailed(let error), .shutdownFailed(let error): words(error)
        case .uncleanShutdown: "the server closed the connection without ending TLS"
        case .cannotMatchULabel: "the server name cannot match a certificate"
        case .noCertificateToValidate: "the server sent no certificate"
        case .unableToValidateCertificate: "the certificate could not be validated"
        case .noSuchFilesystemObject: "the CA file does not exist"
        case .failedToLoadCertificate: "the CA file holds no certificate that can be read"
        default: nil
        }
    }

    private static func words(_ error: BoringSSLError) -> String? {
        switch error {
        case .sslError(let stack), .unknownError(let stack), .invalidSNIName(let stack), .failedToSetALPN(let stack):
            let reasons = stack.map(words).filter { !$0.isEmpty }
            return reasons.isEmpty ? nil : reasons.joined(separator: "; ")
        case .zeroReturn: return "the server closed TLS"
        default: return nil
        }
    }

    private static func words(_ error: NIOSSLExtraError) -> String? {
        switch error {
        case .failedToValidateHostname: "the certificate does not name the server"
        case .serverHostnameImpossibleToMatch: "the server name cannot match a certificate"
        default: nil
        }
    }

    /// `Error: 268435581 error:1000007d:SSL routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED at
    /// …/handshake.cc:320` → `certificate verify failed`; `EOF during handshake` → `eof during handshake`.
    private static func words(_ error: BoringSSLInternalError) -> String {
        var text = Substring(error.description)
        if text.hasPrefix("Error: ") { text = text.dropFirst("Error: ".count).drop { $0 != " " }.dropFirst() }
        if let at = text.ranges(of: " at ").last { text = text[..<at.lowerBound] }
        let reason = text.split(separator: ":").last ?? text
        return reason.lowercased().replacing("_", with: " ")
    }
}
