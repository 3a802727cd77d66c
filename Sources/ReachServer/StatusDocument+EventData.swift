import Hummingbird
import ReachCore

extension StatusDocument {
    /// The bytes `/v1/events` sends as an event's `data:`: one encoding for every carrier of
    /// events (the event stream, webhooks), so that a receiver parses them all alike.
    public static func eventData(_ event: ConnectivityEvent, likelyConnected: Bool) -> ByteBuffer {
        JSONBody.encode(StatusDocument(event: event, likelyConnected: likelyConnected))
    }
}
