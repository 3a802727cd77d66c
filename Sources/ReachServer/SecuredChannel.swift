import HummingbirdCore
import Logging
import NIOCore

/// Hummingbird's HTTP/1 child channel behind a TLS handler made per connection from
/// ``ListenerSecurity``, so that a certificate reloaded on SIGHUP is the one the next handshake
/// presents (Hummingbird's own TLS channel fixes its context when the server is built).
///
/// A connection that does not complete the TLS handshake, plain HTTP included, is closed without
/// an answer.
struct SecuredChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    let base: Base
    let security: ListenerSecurity

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let security = self.security
        return channel.eventLoop.makeCompletedFuture {
            if let handler = security.makeTLSHandler() {
                try channel.pipeline.syncOperations.addHandler(handler)
            }
        }.flatMap {
            self.base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
