import Logging
import NIOCore
import NIOPosix
import NIOSSL
import ReachCore
import ReachOutbound
import ReachSupport
import Synchronization

/// Probes HTTP(S) health endpoints: `GET url` on a fresh connection, judged by status and body.
///
/// Built on SwiftNIO directly (NIOSSL's handler; a connection to an address is started by
/// ``ProbeSocket`` and handed to NIO, one to a name made by `ClientBootstrap`): each probe is one
/// ``HTTPExchange`` on one event loop, where its connect, TLS handshake, request, deadline and close
/// all run; started from a tick on that loop, its result is handed over there too. The request is
/// encoded once per check by NIOHTTP1 (``HTTPRequestPlan``); the answer is read by
/// ``HTTPResponseReader``, which reads the status, `Location` and the body's framing and nothing
/// else. TLS stays in NIOSSL.
///
/// The target's timeout is a hard deadline for the whole exchange, body included, and a timeout
/// names the phase it cut: `connect`, `tls`, `head` or `body`. Connection establishment is never
/// retried. Every probe opens a fresh connection, as blackbox_exporter does, so that every probe
/// proves the whole path (DNS, connect, TLS) and a pooled connection can never hide a dead one.
package final class HTTPProber: StartingProber {
    /// Bodies are read to the end but kept only up to this size for `body_contains` and `json`.
    static let bodyLimit = 1 << 20

    private let eventLoopGroup: any EventLoopGroup
    /// Plans are made once per check; TLS contexts once per CA bundle.
    private let plans = Mutex(Plans())
    private let sockets = ProbeSocket()
    private let tlsContexts = TLSContexts()
    private let logger: Logger

    package init(eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, logger: Logger) {
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
    }

    /// Forgets the prepared requests and TLS contexts. Nothing is pooled, so there is nothing to
    /// close; probes after it still work (they prepare again).
    package func shutdown() async {
        plans.withLock { $0 = Plans() }
        tlsContexts.removeAll()
    }

    package func probe(_ target: ProbeTarget) async -> ProbeResult {
        guard case .http(let check) = target.check else { return Self.notHTTP(target) }
        do {
            _ = try await plan(for: check, of: target.name)
        } catch {
            return .failure(target.name, error.reason, phase: error.phase, detail: error.detail, latency: .zero)
        }
        return await awaitProbe(target)
    }

    /// Starts the exchange on the current event loop when called on one of the group's (a tick of
    /// ``EventLoopProbeTimer``), so that starting it and handing over its result take no hop.
    package func start(_ target: ProbeTarget, whenDone: @escaping @Sendable (ProbeResult) -> Void) -> ProbeCancellation
    {
        guard case .http(let check) = target.check else {
            whenDone(Self.notHTTP(target))
            return .none
        }
        // A check's first probe prepares its plan, off the loop.
        guard let plan = preparedPlan(for: check, of: target.name) else {
            return startInTask(target, whenDone: whenDone)
        }
        let exchange = HTTPExchange(
            target: target,
            check: check,
            plan: plan,
            sockets: sockets,
            loop: eventLoopGroup.any(),
            whenDone: whenDone
        )
        if exchange.loop.inEventLoop {
            exchange.start()
        } else {
            exchange.loop.execute { exchange.start() }
        }
        return ProbeCancellation { exchange.loop.execute { exchange.cancel() } }
    }

    private static func notHTTP(_ target: ProbeTarget) -> ProbeResult {
        .failure(target.name, .protocolError, detail: "not an HTTP target", latency: .zero)
    }

    /// Why a check's probes cannot even be prepared, as its probes report it.
    private struct PlanError: Error {
        var reason: FailureReason
        var phase: ProbePhase?
        var detail: String
    }

    private func preparedPlan(for check: HTTPCheck, of target: String) -> HTTPRequestPlan? {
        plans.withLock { $0.plan(for: check, of: target) }
    }

    /// The plans made, by check, and the one each target last used, by its name: hashing a whole
    /// check (its URL, headers and expectation) for every probe cost more than hashing a name and
    /// comparing the check.
    private struct Plans {
        var byCheck: [HTTPCheck: HTTPRequestPlan] = [:]
        var lastUsed: [String: (check: HTTPCheck, plan: HTTPRequestPlan)] = [:]

        mutating func plan(for check: HTTPCheck, of target: String) -> HTTPRequestPlan? {
            if let last = lastUsed[target], last.check == check { return last.plan }
            guard let plan = byCheck[check] else { return nil }
            lastUsed[target] = (check, plan)
            return plan
        }
    }

    private func plan(for check: HTTPCheck, of target: String) async throws(PlanError) -> HTTPRequestPlan {
        if let plan = preparedPlan(for: check, of: target) { return plan }
        var tls: NIOSSLContext?
        if check.isHTTPS {
            do {
                tls = try await tlsContexts.context(caFile: check.tls.caFile)
            } catch {
                throw PlanError(
                    reason: .tlsFailure,
                    phase: .tls,
                    detail: "cannot set up TLS: \(TLSComplaint.words(error) ?? "the trust store cannot be read")"
                )
            }
        }
        do {
            let plan = try HTTPRequestPlan(check: check, tls: tls)
            plans.withLock { $0.byCheck[check] = plan }
            return plan
        } catch {
            throw PlanError(reason: .protocolError, detail: "cannot send this request: a header is not valid HTTP")
        }
    }

    /// The verdict on a whole answer: the status first, then the body.
    static func judge(
        status: Int,
        location: String? = nil,
        body: ByteBuffer,
        bodyIsCut: Bool,
        check: HTTPCheck,
        target: String,
        timings: ProbeTimings
    ) -> ProbeResult {
        let expectation = check.expectation
        guard expectation.accepts(status: status) else {
            let detail = location.map { "HTTP \(status), redirected to \($0)" } ?? "HTTP \(status)"
            return ProbeResult(
                target: target,
                failure: ProbeFailure(.httpStatus(status), phase: .head, detail: detail, location: location),
                timings: timings
            )
        }
        if let mismatch = expectation.mismatch(in: body) {
            let detail =
                bodyIsCut ? "\(mismatch) (only the first \(bodyLimit >> 20) MiB of the body is read)" : mismatch
            return ProbeResult(
                target: target,
                failure: ProbeFailure(.unexpectedBody, phase: .body, detail: detail),
                timings: timings
            )
        }
        return ProbeResult(target: target, timings: timings)
    }
}
