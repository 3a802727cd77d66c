import Hummingbird
import ReachAPI

/// JSON response bodies, encoded as the contract encodes every document (``ReachAPI/APIJSON``).
enum JSONBody {
    static func encode(_ value: some Encodable) -> ByteBuffer {
        ByteBuffer(bytes: APIJSON.encode(value))
    }

    static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status,
            headers: [.contentType: StatusAPI.jsonMediaType],
            body: ResponseBody(byteBuffer: encode(value))
        )
    }
}
