import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import ReachCore
import Synchronization

/// What a finished HTTP exchange produced: the status, the body (up to a limit) and phase times.
struct Exchange: Sendable {
    var status: Int
    /// The first ``HTTPProber/bodyLimit`` bytes of the body.
    var body: ByteBuffer
    /// Whether the body went on past what ``body`` kept.
    var bodyIsCut: Bool
    var progress: ExchangeProgress
}

/// How far an exchange got, so that a failure or a timeout can name its phase.
struct ExchangeProgress: Sendable {
    var requestSent: Duration?
    var firstByte: Duration?
    var timedOut = false

    /// Before the request went out the exchange was connecting (and, for HTTPS, handshaking: the
    /// client does not tell the two apart); then it waited for the head; then it read the body.
    func phase(isTLS: Bool) -> ProbePhase {
        if firstByte != nil { return .body }
        if requestSent != nil { return .head }
        return isTLS ? .tls : .connect
    }

    func timings(total: Duration) -> ProbeTimings {
        ProbeTimings(connect: requestSent, firstByte: firstByte, total: total)
    }
}

/// Follows one exchange through AsyncHTTPClient's delegate callbacks: notes when the request went
/// out (connection and TLS done) and when the head came back, and keeps the body when a check
/// needs it.
final class ExchangeDelegate: HTTPClientResponseDelegate {
    typealias Response = Exchange

    private struct State {
        var progress = ExchangeProgress()
        var status = 0
        var body = ByteBuffer()
        var bodyIsCut = false
    }

    private let started: ContinuousClock.Instant
    private let keepsBody: Bool
    private let state = Mutex(State())

    init(started: ContinuousClock.Instant, keepsBody: Bool) {
        self.started = started
        self.keepsBody = keepsBody
    }

    var progress: ExchangeProgress { state.withLock { $0.progress } }

    /// Marks that the deadline passed, so that the cancellation that follows reads as a timeout.
    func timedOut() {
        state.withLock { $0.progress.timedOut = true }
    }

    func didSendRequestHead(task: HTTPClient.Task<Exchange>, _ head: HTTPRequestHead) {
        let now = started.duration(to: .now)
        state.withLock { $0.progress.requestSent = now }
    }

    func didReceiveHead(task: HTTPClient.Task<Exchange>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        let now = started.duration(to: .now)
        state.withLock { state in
            state.progress.firstByte = now
            state.status = Int(head.status.code)
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Exchange>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        if keepsBody {
            state.withLock { state in
                var part = buffer
                let room = HTTPProber.bodyLimit - state.body.readableBytes
                if room > 0, let slice = part.readSlice(length: min(room, part.readableBytes)) {
                    state.body.writeImmutableBuffer(slice)
                }
                if part.readableBytes > 0 { state.bodyIsCut = true }
            }
        }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<Exchange>) throws -> Exchange {
        state.withLock { state in
            Exchange(status: state.status, body: state.body, bodyIsCut: state.bodyIsCut, progress: state.progress)
        }
    }
}
