import Crypto
import ReachSupport

/// The `X-Reachd-Signature` header: `sha256=` and the lowercase hex HMAC-SHA256 of the exact body
/// bytes under the webhook's secret (the form GitHub uses, so receivers have code for it).
///
/// Replays need no timestamp header: the signed body carries the event's `sequence`, which grows
/// across reachd's runs (each run starts at the wall clock in microseconds), so a receiver that
/// keeps the highest sequence it accepted rejects a replayed or reordered delivery.
package enum WebhookSignature {
    /// The header name, for receivers and tests.
    package static let header = "X-Reachd-Signature"

    /// The header's value for `body` (exactly the bytes sent) under `secret`.
    package static func value(for body: some Sequence<UInt8>, secret: Secret) -> String {
        let key = SymmetricKey(data: Array(secret.revealed.utf8))
        let code = HMAC<SHA256>.authenticationCode(for: Array(body), using: key)
        return "sha256="
            + code.map { byte in
                let hex = String(byte, radix: 16)
                return byte < 16 ? "0" + hex : hex
            }.joined()
    }
}
