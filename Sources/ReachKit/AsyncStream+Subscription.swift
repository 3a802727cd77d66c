import ReachSupport

extension AsyncStream where Element: Sendable {
    /// What a subscription gives, each value made into an element, as a stream that keeps the newest
    /// `bufferLimit` its consumer has not read: the form ``ConnectivityService/verdicts()`` hands
    /// out. It ends with the subscription; a consumer that drops it stops the reading.
    package init<Value>(
        _ subscription: Subscription<Value>,
        bufferLimit: Int = 32,
        _ element: @escaping @Sendable (Value) -> Element
    ) {
        let (stream, continuation) = AsyncStream.makeStream(
            of: Element.self,
            bufferingPolicy: .bufferingNewest(bufferLimit)
        )
        let pump = Task {
            for await value in subscription { continuation.yield(element(value)) }
            continuation.finish()
        }
        continuation.onTermination = { _ in pump.cancel() }
        self = stream
    }
}
