import GRPCCore
import ReachSupport

/// Requires `authorization: Bearer <token>` metadata on every call, the gRPC form of the status
/// endpoint's rule: a health service reachable from other machines tells them which servers this
/// machine talks to and when it is offline. `grpc_health_probe -rpc-header`, grpcio's `metadata=`
/// and Envoy's `initial_metadata` all send it.
struct BearerTokenInterceptor: ServerInterceptor {
    let token: Secret

    func intercept<Input: Sendable, Output: Sendable>(
        request: StreamingServerRequest<Input>,
        context: ServerContext,
        next: @Sendable (StreamingServerRequest<Input>, ServerContext) async throws -> StreamingServerResponse<Output>
    ) async throws -> StreamingServerResponse<Output> {
        let presented = request.metadata["authorization"].lazy.compactMap { value -> String? in
            if case .string(let text) = value { text } else { nil }
        }.first
        guard let presented, token.isBearerCredential(presented) else {
            let problem =
                presented == nil
                ? "this service requires authorization: Bearer <token> metadata" : "invalid bearer token"
            return StreamingServerResponse(error: RPCError(code: .unauthenticated, message: problem))
        }
        return try await next(request, context)
    }
}
