import GRPCCore
import GRPCHealthProto
import GRPCProtobuf
import ReachCore
import ReachProbes

extension FuzzInput {
    /// A gRPC health server's answers: the `HealthCheckResponse` message, decoded with the very
    /// deserializer the generated client uses (`ProtobufDeserializer`) and judged as the prober
    /// judges it (`GRPCHealthProber.result(for:target:latency:)`); and a call's non-OK status
    /// (`grpc-status`, `grpc-message`), classified as the prober classifies it (`GRPCFailure`).
    ///
    /// The bytes are the message; the first byte is also the status code (0–16, else unknown as
    /// gRPC maps an unknown code) and the rest the status message. A message that decodes must
    /// encode and decode to the same message, and only `SERVING` is a success.
    package static func grpcHealth(_ bytes: [UInt8]) {
        if let response = try? ProtobufDeserializer<Grpc_Health_V1_HealthCheckResponse>().deserialize(bytes) {
            do {
                let encoded: [UInt8] = try ProtobufSerializer<Grpc_Health_V1_HealthCheckResponse>().serialize(response)
                let again = try ProtobufDeserializer<Grpc_Health_V1_HealthCheckResponse>().deserialize(encoded)
                require(again == response, "a health answer re-encoded decodes to another message")
            } catch {
                preconditionFailure("fuzz invariant broken: a decoded health answer does not re-encode: \(error)")
            }
            let result = GRPCHealthProber.result(for: response.status, target: "fuzz", latency: .milliseconds(1))
            require(
                (result.failure == nil) == (response.status == .serving),
                "\(response.status) judged as \(String(describing: result.failure))"
            )
        }
        guard let first = bytes.first else { return }
        let code = Status.Code(rawValue: Int(first)) ?? .unknown
        let status = Status(code: code, message: text(bytes.dropFirst()))
        guard let error = RPCError(status: status) else {
            require(code == .ok, "a non-OK status made no error")
            return
        }
        for phase in [ProbePhase.connect, .head, .body] {
            let failure = GRPCFailure.classify(error, phase: phase, taskCancelled: false)
            _ = failure.detail
        }
        _ = GRPCFailure.describe(error)
    }
}
