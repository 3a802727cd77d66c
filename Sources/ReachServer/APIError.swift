import Hummingbird
import ReachAPI

/// An error answer of the status API: a status code and `{"error": "..."}`.
///
/// Every error the API returns has this one shape, whether a route threw it or Hummingbird did
/// (404 for an unknown path), so a client needs one parser for all of them.
struct APIError: Error, HTTPResponseError, Sendable {
    var status: HTTPResponse.Status
    var message: String
    var headers: HTTPFields = [:]

    init(_ status: HTTPResponse.Status, _ message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.message = message
        self.headers = headers
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        response
    }

    /// The error as a response, for handlers that answer an error without throwing.
    var response: Response {
        var response = JSONBody.response(APIErrorDocument(error: message), status: status)
        response.headers.append(contentsOf: headers)
        return response
    }
}
