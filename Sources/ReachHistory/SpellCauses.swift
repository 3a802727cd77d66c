/// What an outage is reported as when its reason changed while it lasted: the reason, fault and
/// failing target that held longest (the first of equals).
///
/// A server that dies with a probe in flight is first `connection_reset`, then `connection_refused`
/// for as long as it stays down; a network that drops is a `timeout` before it is `no_route`. The
/// first reason is an accident of timing, the one that held is what the outage was. The
/// transitions keep every change, the first one included.
struct SpellCauses {
    struct Cause: Hashable {
        var reason: String?
        var fault: String?
        var target: String?
    }

    /// Each cause seen, in order, with how long it held before the current one.
    private var held: [(cause: Cause, seconds: Double)] = []
    private var current = Cause()
    private var since = 0.0

    init() {}

    init(first: Cause, at time: Double) {
        current = first
        since = time
    }

    /// The spell goes on with another cause from `time`.
    mutating func change(to cause: Cause, at time: Double) {
        held.append((current, time - since))
        (current, since) = (cause, time)
    }

    /// The cause that held longest, counting the current one until `time`.
    func longestHeld(until time: Double) -> Cause {
        var totals: [Cause: Double] = [:]
        var order: [Cause] = []
        for (cause, seconds) in held + [(current, time - since)] {
            if totals[cause] == nil { order.append(cause) }
            totals[cause, default: 0] += seconds
        }
        var longest = current
        var longestSeconds = -Double.infinity
        for cause in order where totals[cause, default: 0] > longestSeconds {
            (longest, longestSeconds) = (cause, totals[cause, default: 0])
        }
        return longest
    }
}
