/// The registered reactions and what each is doing: the bookkeeping half of the reaction rule,
/// synchronous and free of tasks, so that the monitor keeps it under its lock (decisions follow
/// publication order) and tests can drive every interleaving step by step.
///
/// The rule, for each reaction (an in-process callback, a hook directory, a webhook):
/// - it runs once for each transition of its directions that arrives while it is idle;
/// - it never runs twice at once: a transition that arrives while it runs waits;
/// - when the run ends, if the latest transition (of either direction) that arrived meanwhile is of
///   its directions, it runs once more with that one, and the earlier ones of its directions are
///   counted as coalesced into that run; otherwise nothing runs and they are reported as skipped.
/// A run ends when its body really returns, not when its timeout reports it: a body that ignores
/// cancellation keeps its reaction busy, so it never piles up one task per transition.
struct ReactionTable {
    /// A run to start now.
    struct Start: Sendable {
        let reaction: CallbackRegistration
        let transition: ConnectivityTransition
        /// Transitions of the reaction's directions folded into this run.
        let coalesced: Int
    }

    /// A transition that found a reaction still running after its timeout: worth a warning, once per run.
    struct Stuck: Sendable {
        let reaction: CallbackRegistration
        let transition: ConnectivityTransition
    }

    /// What a transition set in motion.
    struct Arrival: Sendable {
        var starts: [Start] = []
        var stuck: [Stuck] = []
    }

    /// What follows the end of a run: the next run, or a report of what was skipped (or neither).
    struct Finish: Sendable {
        var next: Start?
        var skipped: CallbackReport?
    }

    private struct Slot {
        var reaction: CallbackRegistration
        var isRunning = false
        /// Removed while running: dropped when the run ends.
        var isRemoved = false
        /// Past its timeout and still running.
        var isOverdue = false
        var warnedOverdue = false
        /// The latest transition of either direction since the run started.
        var latest: ConnectivityTransition?
        /// Transitions of the reaction's directions since the run started, and the last of them.
        var owed = 0
        var lastOwed: ConnectivityTransition?
    }

    private var slots: [CallbackID: Slot] = [:]
    private var lastID: UInt64 = 0

    mutating func add(
        name: String?,
        directions: Set<TransitionDirection>,
        timeout: Duration?,
        body: @escaping @Sendable (ConnectivityTransition) async throws -> Void
    ) -> CallbackID {
        lastID += 1
        let id = CallbackID(rawValue: lastID)
        slots[id] = Slot(
            reaction: CallbackRegistration(
                id: id,
                name: name ?? id.description,
                directions: directions,
                timeout: timeout,
                body: body
            )
        )
        return id
    }

    /// Removes a reaction from future transitions; a run under way continues to its end.
    mutating func remove(_ id: CallbackID) -> Bool {
        guard let slot = slots[id], !slot.isRemoved else { return false }
        if slot.isRunning {
            slots[id]?.isRemoved = true
        } else {
            slots[id] = nil
        }
        return true
    }

    /// A transition was published: starts the idle reactions of its direction (in registration
    /// order) and leaves it waiting at the busy ones.
    mutating func arrive(_ transition: ConnectivityTransition) -> Arrival {
        var arrival = Arrival()
        for id in slots.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            guard var slot = slots[id], !slot.isRemoved else { continue }
            let isOwn = slot.reaction.directions.contains(transition.direction)
            if slot.isRunning {
                slot.latest = transition
                if isOwn {
                    slot.owed += 1
                    slot.lastOwed = transition
                }
                if slot.isOverdue, !slot.warnedOverdue {
                    slot.warnedOverdue = true
                    arrival.stuck.append(Stuck(reaction: slot.reaction, transition: transition))
                }
            } else if isOwn {
                slot.isRunning = true
                arrival.starts.append(Start(reaction: slot.reaction, transition: transition, coalesced: 0))
            }
            slots[id] = slot
        }
        return arrival
    }

    /// The run of `id` reported a timeout and is still going.
    mutating func markOverdue(_ id: CallbackID) {
        slots[id]?.isOverdue = true
    }

    /// The run of `id` has ended (its body returned, or reachd is `stopping` and no longer waits
    /// for it): decides what comes next.
    mutating func finish(_ id: CallbackID, stopping: Bool = false) -> Finish {
        guard var slot = slots[id] else { return Finish() }
        let (latest, owed, lastOwed) = (slot.latest, slot.owed, slot.lastOwed)
        slot.latest = nil
        slot.owed = 0
        slot.lastOwed = nil
        slot.isOverdue = false
        slot.warnedOverdue = false
        if !stopping, !slot.isRemoved, let latest, slot.reaction.directions.contains(latest.direction) {
            slots[id] = slot
            return Finish(next: Start(reaction: slot.reaction, transition: latest, coalesced: owed - 1))
        }
        slot.isRunning = false
        slots[id] = slot.isRemoved ? nil : slot
        guard owed > 0, let lastOwed else { return Finish() }
        return Finish(
            skipped: CallbackReport(
                callback: id,
                name: slot.reaction.name,
                direction: lastOwed.direction,
                sequence: lastOwed.sequence,
                outcome: .skipped,
                duration: .zero,
                coalesced: owed
            )
        )
    }
}
