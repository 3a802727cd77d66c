import Hummingbird
import Logging

/// Gives every error the API's shape (``APIError``) and turns Hummingbird's "not found" for a
/// known path into 405 Method Not Allowed with an `Allow` header.
///
/// Hummingbird's router answers 404 both for an unknown path and for a known path with the wrong
/// method; the second is a client's mistake of a different kind, and the `Allow` header tells it
/// what would work.
struct APIErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The methods each path answers to.
    let allowedMethods: [String: [HTTPRequest.Method]]

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let error as HTTPError {
            if error.status == .notFound {
                throw notFound(request)
            }
            throw APIError(error.status, error.body ?? error.status.reasonPhrase, headers: error.headers)
        } catch let error as any HTTPResponseError {
            throw APIError(error.status, error.status.reasonPhrase)
        } catch {
            context.logger.error("request failed", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            throw APIError(.internalServerError, "internal error")
        }
    }

    private func notFound(_ request: Request) -> APIError {
        guard let methods = allowedMethods[request.uri.path] else {
            return APIError(.notFound, "no such endpoint: \(request.uri.path)")
        }
        let allow = methods.map(\.rawValue).joined(separator: ", ")
        return APIError(
            .methodNotAllowed,
            "\(request.method.rawValue) is not allowed on \(request.uri.path); use \(allow)",
            headers: [.allow: allow]
        )
    }
}
