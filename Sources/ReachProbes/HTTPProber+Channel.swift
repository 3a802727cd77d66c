import NIOCore
import ReachCore
import ReachSupport

extension HTTPProber {
    /// One plain-HTTP probe of `target` over `channel`, a channel already connected (an
    /// `EmbeddedChannel`): the request plan, the handler (and its answer reader) and the judging a real probe uses, minus
    /// the connect and the deadline. `whenDone` is called once, when the answer is whole, the
    /// channel fails or closes.
    ///
    /// The seam the fuzz targets (`FuzzTesting`, `fuzz-http-response`) feed a server's bytes
    /// through, so that they meet the very handlers a probe installs, not a copy of them.
    ///
    /// - Throws: When the plan cannot be made (a header NIOHTTP1 refuses) or the handlers cannot be added.
    package static func exchange(
        _ target: ProbeTarget,
        over channel: any Channel,
        whenDone: @escaping @Sendable (ProbeResult) -> Void
    ) throws {
        guard case .http(let check) = target.check, !check.isHTTPS else {
            preconditionFailure("HTTPProber.exchange(_:over:whenDone:) takes a plain-HTTP target")
        }
        let plan = try HTTPRequestPlan(check: check, tls: nil)
        try HTTPExchange(
            target: target,
            check: check,
            plan: plan,
            sockets: ProbeSocket(),
            loop: channel.eventLoop,
            whenDone: whenDone
        )
        .run(over: channel)
    }
}
