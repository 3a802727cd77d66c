import NIOCore
import NIOSSL
import ReachCore
import ReachSupport

/// What one TLS connection's server presented, as the certificate verifier was shown it: the
/// earliest `notAfter`, and the last certificate seen.
///
/// BoringSSL shows the verification callback every certificate of the chain it built, from the
/// trust anchor down to the leaf, and stops at the first that fails, showing that one with its
/// error: an expired leaf is seen, so its date is known although the handshake fails. Each step
/// costs a comparison and a reference; the names are read once, in ``certificate(leaf:)``.
struct PresentedChain {
    /// The earliest `notAfter` so far, in seconds since the epoch.
    private var earliest: Int?
    /// The leaf once the whole chain verified; the certificate that failed otherwise.
    private var last: NIOSSLCertificate?

    mutating func saw(_ certificate: NIOSSLCertificate) {
        let notAfter = Int(certificate.notValidAfter)
        earliest = min(earliest ?? notAfter, notAfter)
        last = certificate
    }

    /// The chain in our terms; `nil` before any certificate.
    ///
    /// - Parameter leaf: The server's own certificate as the handshake left it: the verifier,
    ///   stopping at a failing intermediate, may never have shown it.
    func certificate(leaf: NIOSSLCertificate?) -> ServerCertificate? {
        guard let leaf = leaf ?? last else { return nil }
        var notAfter = earliest ?? Int(leaf.notValidAfter)
        // Once the chain verified, the leaf was the last one shown: its date is counted already.
        if let last, leaf != last { notAfter = min(notAfter, Int(leaf.notValidAfter)) }
        return ServerCertificate(
            notAfter: WallTime(sinceEpoch: .seconds(notAfter)),
            subject: Self.distinguishedName(leaf.subjectName),
            issuer: Self.distinguishedName(leaf.issuerName)
        )
    }

    /// The chain in our terms, with the leaf as the handshake on `pipeline` left it.
    func certificate(on pipeline: ChannelPipeline.SynchronousOperations) -> ServerCertificate? {
        certificate(leaf: try? pipeline.nioSSL_peerCertificate())
    }

    /// `CN=api.example.com, O=Example`: RFC 4514's order (the most specific first) and escapes,
    /// with a space after each comma for people. Attributes NIOSSL cannot name are left out.
    static func distinguishedName(_ names: [SSLCertificateName]) -> String {
        names.reversed().compactMap { name in
            attributeTypes.first { $0.type == name.type }.map { "\($0.key)=\(escaped(name.value))" }
        }.joined(separator: ", ")
    }

    private static let attributeTypes: [(type: SSLCertificateNameType, key: String)] = [
        (.commonName, "CN"), (.organizationalUnit, "OU"), (.organization, "O"), (.city, "L"), (.state, "ST"),
        (.country, "C"),
        (.emailAddress, "emailAddress"), (.userId, "UID"),
    ]

    /// RFC 4514 §2.4: a backslash before `"+,;<>\`, a leading `#` or space, and a trailing space.
    private static func escaped(_ value: String) -> String {
        // Nearly every name needs none: checked on the bytes, as walking characters costs more
        // than the rest of reading the chain.
        let utf8 = value.utf8
        let special = { (byte: UInt8) in
            byte == 0x22 || byte == 0x2B || byte == 0x2C || byte == 0x3B || byte == 0x3C || byte == 0x3E || byte == 0x5C
        }
        if !utf8.contains(where: special), utf8.first != 0x23, utf8.first != 0x20, utf8.last != 0x20 { return value }
        var text = ""
        let last = value.count - 1
        for (offset, character) in value.enumerated() {
            let atEdge = (offset == 0 && (character == "#" || character == " ")) || (offset == last && character == " ")
            if atEdge || "\"+,;<>\\".contains(character) { text.append("\\") }
            text.append(character)
        }
        return text
    }
}
