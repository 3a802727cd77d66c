import Logging

extension LogHandler {
    /// The metadata of one line: the handler's own, then its provider's, then the event's, each
    /// overriding the one before, as swift-log's documentation asks of a handler.
    func lineMetadata(for event: LogEvent) -> Logger.Metadata {
        var fields = metadata
        if let provided = metadataProvider?.get() { fields.merge(provided) { _, new in new } }
        if let own = event.metadata { fields.merge(own) { _, new in new } }
        return fields
    }
}
