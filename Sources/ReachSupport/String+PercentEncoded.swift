extension String {
    /// The text with every UTF-8 byte that `keeps` refuses written as `%XX` (uppercase hex): the one
    /// encoder behind a query string (RFC 3986's unreserved bytes kept) and the page's cookie value
    /// (RFC 6265's cookie octets kept).
    package func percentEncoded(keeping keeps: (UInt8) -> Bool) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var result = ""
        for byte in utf8 {
            if keeps(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result.unicodeScalars.append(contentsOf: [
                    "%", Unicode.Scalar(hex[Int(byte >> 4)]), Unicode.Scalar(hex[Int(byte & 0xF)]),
                ])
            }
        }
        return result
    }
}
