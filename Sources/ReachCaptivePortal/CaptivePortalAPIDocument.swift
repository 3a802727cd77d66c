import FoundationEssentials
import ReachCore
import ReachSupport

/// The RFC 8908 API's JSON (`application/captive+json`), read leniently: only `captive` is
/// required; a field of the wrong type is treated as absent, as the RFC asks of clients.
package struct CaptivePortalAPIDocument: Decodable {
    var captive: Bool
    var userPortalURL: String?
    var venueInfoURL: String?
    var secondsRemaining: Int?
    var bytesRemaining: Int?

    enum CodingKeys: String, CodingKey {
        case captive
        case userPortalURL = "user-portal-url"
        case venueInfoURL = "venue-info-url"
        case secondsRemaining = "seconds-remaining"
        case bytesRemaining = "bytes-remaining"
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        captive = try container.decode(Bool.self, forKey: .captive)
        // Shown in notifications and opened in a browser: only what HTTPURL finds openable.
        userPortalURL = (try? container.decodeIfPresent(String.self, forKey: .userPortalURL)).flatMap(HTTPURL.openable)
        venueInfoURL = (try? container.decodeIfPresent(String.self, forKey: .venueInfoURL)).flatMap(HTTPURL.openable)
        secondsRemaining = (try? container.decodeIfPresent(Double.self, forKey: .secondsRemaining)).flatMap(Self.count)
        bytesRemaining = (try? container.decodeIfPresent(Double.self, forKey: .bytesRemaining)).flatMap(Self.count)
    }

    /// Parses an API answer; `nil` when it is not the API's JSON. Package-visible for the fuzz
    /// targets (`FuzzTesting`), which feed it any bytes.
    package static func parse(_ bytes: [UInt8]) -> CaptivePortalAPIAnswer? {
        guard let document = try? JSONDecoder().decode(Self.self, from: Data(bytes)) else { return nil }
        return CaptivePortalAPIAnswer(
            isCaptive: document.captive,
            userPortalURL: document.userPortalURL,
            venueInfoURL: document.venueInfoURL,
            secondsRemaining: document.secondsRemaining,
            bytesRemaining: document.bytesRemaining
        )
    }

    private static func count(_ value: Double?) -> Int? {
        guard let value, value.isFinite, value >= 0, value < 1e15 else { return nil }
        return Int(value)
    }
}
