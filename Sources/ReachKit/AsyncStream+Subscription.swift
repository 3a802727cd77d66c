import ReachSupport

extension AsyncStream where Element: Sendable {
    /// `first`, then what a subscription gives, each value made into an element, as a stream that
    /// keeps the newest `bufferLimit` its consumer has not read: the form
    /// ``ConnectivityService/verdicts()`` hands out. `first` is in the stream when this returns, so
    /// a consumer reads the current verdict without waiting for the subscription's reader. It ends
    /// with the subscription; a consumer that drops it stops the reading.
    package init<Value>(
        first: Element? = nil,
        _ subscription: Subscription<Value>,
        bufferLimit: Int = 32,
        _ element: @escaping @Sendable (Value) -> Element
    ) {
        let (stream, continuation) = AsyncStream.makeStream(
            of: Element.self,
            bufferingPolicy: .bufferingNewest(bufferLimit)
        )
        if let first { continuation.yield(first) }
        let pump = Task {
            for await value in subscription { continuation.yield(element(value)) }
            continuation.finish()
        }
        continuation.onTermination = { _ in pump.cancel() }
        self = stream
    }
}
