import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Hummingbird

/// JSON response bodies: one encoder configuration for every answer.
enum JSONBody {
    /// Keys sorted, so that the same document always has the same bytes; one line, so that a
    /// document fits an SSE `data:` field.
    static func encode(_ value: some Encodable) -> ByteBuffer {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return ByteBuffer(bytes: try encoder.encode(value))
        } catch {
            // Our documents hold strings, numbers, booleans and arrays of them: encoding cannot fail.
            preconditionFailure("encoding \(type(of: value)) failed: \(error)")
        }
    }

    static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: encode(value)))
    }
}
