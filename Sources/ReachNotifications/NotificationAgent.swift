import Dispatch
import Glibc
import Logging
import ReachAPI
import ReachClient
import ReachCore
import ReachPOSIX
import ReachSupport

/// The desktop agent behind `reachctl notify-agent`: follows reachd's event stream and shows the
/// verdict as one desktop notification. ``NotificationPolicy`` decides; this wires it to the
/// event stream, the session bus, a timer, `POST /v1/check` and the browser, one input at a time.
package struct NotificationAgent: Sendable {
    private let client: ReachdClient
    private let settings: NotificationPolicy<ContinuousClock.Instant>.Settings
    private let opener: any URLOpener
    private let logger: Logger

    /// An agent following reachd at `client`'s endpoint, posting as `settings` allow, opening
    /// sign-in pages with `opener` (by default the desktop's: ``DesktopURLOpener``).
    package init(
        client: ReachdClient,
        settings: NotificationPolicy<ContinuousClock.Instant>.Settings,
        opener: (any URLOpener)? = nil,
        logger: Logger
    ) {
        self.client = client
        self.settings = settings
        self.opener = opener ?? DesktopURLOpener(logger: logger)
        self.logger = logger
    }

    /// Everything the policy hears about, in arrival order.
    private enum Input: Sendable {
        case verdict(NotificationPolicy<ContinuousClock.Instant>.Verdict)
        case bus(DesktopNotifier.Event)
        case tick
        case checkFinished
        case stop
    }

    /// Runs until one of `stopSignals` arrives (it then takes its notification away, so no stale
    /// "Waiting" outlives it) or the task is cancelled.
    package func run(stopSignals: [Int32] = [SIGTERM, SIGINT]) async {
        let (inputs, sink) = AsyncStream.makeStream(of: Input.self)
        let notifier = DesktopNotifier(logger: logger)
        let sources = stopSignals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { sink.yield(.stop) }
            source.resume()
            return source
        }
        defer { sources.forEach { $0.cancel() } }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await notifier.run { sink.yield(.bus($0)) } }
            group.addTask { await followVerdicts(into: sink) }
            await decide(inputs, sink: sink, notifier: notifier)
            group.cancelAll()
        }
    }

    private func decide(
        _ inputs: AsyncStream<Input>,
        sink: AsyncStream<Input>.Continuation,
        notifier: DesktopNotifier
    ) async {
        var policy = NotificationPolicy<ContinuousClock.Instant>(settings: settings)
        var timer: Task<Void, Never>?
        var armedFor: ContinuousClock.Instant?
        var postFailing = false
        defer { timer?.cancel() }
        for await input in inputs {
            var effects: [NotificationPolicy<ContinuousClock.Instant>.Effect]
            let now = ContinuousClock.now
            switch input {
            case .verdict(let verdict): effects = policy.verdict(verdict, at: now)
            case .tick: effects = policy.tick(at: now)
            case .checkFinished: effects = policy.checkFinished(at: now)
            case .stop:
                if policy.notificationID != 0 { try? await notifier.close(policy.notificationID) }
                logger.info("stopping")
                return
            case .bus(let event):
                logger.debug("session bus: \(event)")
                switch event {
                case .ready:
                    logger.info("connected to the session bus")
                    effects = policy.serverReady(at: now)
                case .serverStarted: effects = policy.serverReady(at: now)
                case .serverStopped: effects = policy.serverGone(busLost: false, at: now)
                case .busLost: effects = policy.serverGone(busLost: true, at: now)
                case .closed(let id, _): effects = policy.closed(id: id, at: now)
                case .actionInvoked(let id, let action): effects = policy.actionInvoked(id: id, action: action, at: now)
                }
            }
            while !effects.isEmpty {
                switch effects.removeFirst() {
                case .post(let notification, let replacing):
                    do {
                        let id = try await notifier.notify(notification, replacing: replacing)
                        logger.info(
                            "showing \"\(notification.summary)\": \(notification.body)",
                            metadata: ["id": "\(id)"]
                        )
                        postFailing = false
                        effects += policy.posted(id: id, at: .now)
                    } catch {
                        // Once per run of failures: a missing server would otherwise log every window.
                        if !postFailing { logger.warning("cannot show the notification: \(error); retrying") }
                        postFailing = true
                        effects += policy.postFailed(at: .now)
                    }
                case .close(let id):
                    do {
                        try await notifier.close(id)
                        logger.info(
                            "withdrew the notification: it no longer tells the truth",
                            metadata: ["id": "\(id)"]
                        )
                    } catch {
                        logger.notice("cannot withdraw notification \(id): \(error)")
                    }
                case .open(let url):
                    logger.info("Open sign-in page: opening \(url)")
                    Task {
                        do {
                            let route = try await opener.open(url)
                            logger.info("opened \(url) through \(route)")
                        } catch {
                            logger.warning("cannot open \(url): \(error)")
                        }
                    }
                case .checkNow:
                    logger.info("Check now: asking reachd to probe every target")
                    Task {
                        do {
                            let answer = try await client.check()
                            logger.info("check answered: \(answer.document.headline)")
                        } catch {
                            logger.warning("the check failed: \(error)")
                        }
                        sink.yield(.checkFinished)
                    }
                }
            }
            let deadline = policy.nextDeadline
            if deadline != armedFor {
                timer?.cancel()
                armedFor = deadline
                timer = deadline.map { Task.after(ContinuousClock.now.duration(to: $0)) { sink.yield(.tick) } }
            }
            // Only this timer changes the screen without news from reachd or the desktop.
            logger.debug(
                "\(deadline.map { "next decision in \(ContinuousClock.now.duration(to: $0))" } ?? "nothing scheduled")"
            )
        }
    }

    /// Feeds every verdict of reachd's event stream into `sink`, reconnecting for ever (capped,
    /// jittered backoff); logs the first failure of a run of them, then quietly retries.
    private func followVerdicts(into sink: AsyncStream<Input>.Continuation) async {
        var away = false
        // Throws only when cancelled: the agent is stopping.
        try? await client.follow(
            backoff: ReconnectBackoff(first: .milliseconds(250), longest: .seconds(30), jitter: true)
        ) { update in
            switch update {
            case .verdict(let document):
                if away {
                    logger.info("reachd answers again at \(client.endpoint.base)")
                    away = false
                }
                sink.yield(.verdict(.init(document: document, receivedAt: .now, wallNow: .now())))
            case .disconnected(let error, let wait) where away:
                logger.debug("\(error.description); retrying in \(wait)")
            case .disconnected(let error, _):
                logger.warning("\(error.description); retrying with backoff until it answers")
                away = true
            }
            return true
        }
    }
}
