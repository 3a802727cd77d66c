import Logging
import ReachAPI
import ReachConfig
import ReachCore

/// Runs one direction's hook directory for a transition: each accepted hook in lexical order, one
/// after another, the way NetworkManager's dispatcher does, so that a later hook can rely on an
/// earlier one having finished.
///
/// The directory is one reaction under the monitor's rule: it never runs twice at once, and a
/// flip storm during a slow hook coalesces into one more pass at the latest state (or none, with
/// the skip logged). Each hook has its own timeout; the directory has none of its own.
struct HookRunner: Sendable {
    let direction: TransitionDirection
    let settings: HookSettings
    let observer: (any ReactionObserver)?
    let names: HookNames
    let logger: Logger

    /// The environment a hook sees besides the REACHD_ variables: nothing of reachd's own.
    static let path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

    /// Some hooks did not succeed; the monitor reports the directory's run as failed with this.
    struct HooksFailed: Error, CustomStringConvertible {
        let failures: [String]
        var description: String { failures.joined(separator: ", ") }
    }

    var directory: HookDirectory { HookDirectory(path: settings.directory(for: direction)) }

    /// What a hook finds in its environment for `transition`: the same values as the status document.
    static func environment(for transition: ConnectivityTransition) -> [String: String] {
        let document = StatusDocument(
            event: ConnectivityEvent(sequence: transition.sequence, verdict: transition.verdict),
            likelyConnected: false
        )
        var environment = [
            "PATH": path,
            "REACHD_STATE": document.state,
            "REACHD_PREVIOUS_STATE": transition.direction == .restored
                ? ConnectivityState.disconnected.rawValue : ConnectivityState.connected.rawValue,
            "REACHD_REASON": document.reason,
            // Where the path breaks (link, gateway, dns, upstream, server, portal); empty when connected.
            "REACHD_FAULT": document.fault ?? "",
            "REACHD_INTERFACE": document.usableInterfaces.joined(separator: ","),
            // The uplinks that reach the targets on their own (`probe.per_interface`); empty when off.
            "REACHD_REACHABLE_INTERFACES": document.reachableInterfaces.joined(separator: ","),
            "REACHD_SEQUENCE": "\(transition.sequence)",
            "REACHD_SINCE": document.since,
        ]
        // Behind a captive portal: where to sign in (empty when the portal did not say).
        if let portal = document.portal, portal.captive {
            environment["REACHD_PORTAL_URL"] = portal.userPortalURL ?? ""
        }
        return environment
    }

    /// Runs every hook of the directory for `transition`; throws when any did not succeed.
    func run(for transition: ConnectivityTransition) async throws {
        let entries: [HookDirectory.Entry]
        switch directory.read() {
        case .missing:
            logger.debug("no hook directory \(directory.path)")
            return
        case .unusable(let reason):
            logger.warning(
                "hook directory \(directory.path) not used: \(reason)",
                metadata: ReachLogEvent.hookFailed.metadata
            )
            throw HooksFailed(failures: ["\(directory.path) not used"])
        case .entries(let found):
            entries = found
        }
        var failures: [String] = []
        for entry in entries {
            if Task.isCancelled { break }
            switch entry {
            case .refused(let name, let path, let reason):
                logger.warning(
                    "hook \(path) refused: \(reason); a hook must be a regular executable file owned by root, not writable by group or others, not setuid",
                    metadata: metadata(name, transition).merging(ReachLogEvent.hookFailed.metadata) { $1 }
                )
                observer?.hookFinished(names.label(name), outcome: .refused, duration: .zero)
                failures.append("\(name) refused")
            case .hook(let name, let path):
                if let failure = await runHook(name: name, path: path, for: transition) { failures.append(failure) }
            }
        }
        if !failures.isEmpty { throw HooksFailed(failures: failures) }
    }

    /// Runs one hook; a short description of its failure, or `nil` when it exited 0.
    private func runHook(name: String, path: String, for transition: ConnectivityTransition) async -> String? {
        let budget = OutputBudget()
        let base = metadata(name, transition)
        let logger = self.logger
        let process = HookProcess(
            path: path,
            environment: Self.environment(for: transition),
            timeout: settings.timeout,
            killGrace: settings.killGrace
        )
        let clock = ContinuousClock()
        let started = clock.now
        let ending = await process.run { stream, line in
            guard budget.take() else { return }
            var fields = base
            fields["stream"] = "\(stream.rawValue)"
            logger.log(level: stream == .stdout ? .info : .notice, "\(name): \(line)", metadata: fields)
        }
        let duration = started.duration(to: clock.now)
        if budget.droppedLines > 0 {
            logger.notice(
                "\(name): \(budget.droppedLines) more output lines not logged (at most \(OutputBudget.defaultLines) per run)",
                metadata: base
            )
        }
        var fields = base
        fields["duration_ms"] = "\(Int(duration / .milliseconds(1)))"
        let outcome: HookOutcome
        let failure: String?
        switch ending {
        case .exited(0):
            (outcome, failure) = (.ok, nil)
            fields["exit_status"] = "0"
            logger.info("hook \(name) exited 0", metadata: fields)
        case .exited(let code):
            (outcome, failure) = (.failed, "\(name) exited \(code)")
            fields["exit_status"] = "\(code)"
        case .signaled(let signal):
            (outcome, failure) = (.failed, "\(name) killed by signal \(signal)")
            fields["signal"] = "\(signal)"
        case .timedOut:
            (outcome, failure) = (.timedOut, "\(name) timed out after \(settings.timeout), its process group killed")
        case .notStarted(let reason):
            (outcome, failure) = (.notStarted, "\(name) could not start: \(reason)")
        case .cancelled:
            (outcome, failure) = (.cancelled, "\(name) stopped with reachd")
        }
        if let failure {
            logger.warning("hook \(failure)", metadata: fields.merging(ReachLogEvent.hookFailed.metadata) { $1 })
        }
        observer?.hookFinished(names.label(name), outcome: outcome, duration: duration)
        return failure
    }

    private func metadata(_ name: String, _ transition: ConnectivityTransition) -> Logger.Metadata {
        ["hook": "\(name)", "direction": "\(direction.rawValue)", "sequence": "\(transition.sequence)"]
    }
}
