import FoundationEssentials

extension URLComponents {
    /// The URL's host as written. `host` decodes percent-escapes and runs IDNA through ICU, whose
    /// code (over a MiB of it) a daemon would otherwise map at start for hosts like `127.0.0.1`;
    /// only a host that has escapes to decode pays for that.
    var hostAsWritten: String? {
        guard let encoded = encodedHost, encoded.contains("%") else { return encodedHost }
        return host
    }
}
