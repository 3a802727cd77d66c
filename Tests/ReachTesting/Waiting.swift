/// Thrown when a condition a test waits for does not come true in time.
package struct TimedOutWaiting: Error, CustomStringConvertible {
    package let condition: String
    /// The longest a pause between two looks overran its length: a second here means the test
    /// process's threads were busy elsewhere, so the timeout measured the neighbours, not the code.
    package var longestLateWakeUp: Duration = .zero
    package var description: String {
        let late =
            longestLateWakeUp > .milliseconds(100) ? " (one pause between looks woke \(longestLateWakeUp) late)" : ""
        return "timed out waiting for \(condition)\(late)"
    }
}

/// Waits until `check` holds, or throws after `timeout`: the one way tests wait for something
/// outside their control (a process's output, a file, a server's answer) to happen.
///
/// It looks again every millisecond (or `every`, for a check that costs its target real work,
/// such as a Prometheus query), so it answers within that of the event; the pause between looks
/// is the only sleep a test needs for synchronisation, and it is here.
package func waitUntil(
    _ condition: String,
    timeout: Duration = .seconds(10),
    every interval: Duration = .milliseconds(1),
    _ check: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    var longestLateWakeUp = Duration.zero
    while try await !check() {
        guard ContinuousClock.now < deadline else {
            throw TimedOutWaiting(condition: condition, longestLateWakeUp: longestLateWakeUp)
        }
        let asleep = ContinuousClock.now
        try await Task.sleep(for: interval)  // between two looks: see above
        longestLateWakeUp = max(longestLateWakeUp, ContinuousClock.now - asleep - interval)
    }
}

/// Waits until `produce` gives a value, and returns it; throws after `timeout`.
package func waitFor<T>(
    _ condition: String,
    timeout: Duration = .seconds(10),
    every interval: Duration = .milliseconds(1),
    _ produce: () async throws -> T?
) async throws -> T {
    var found: T?
    try await waitUntil(condition, timeout: timeout, every: interval) {
        found = try await produce()
        return found != nil
    }
    return found!
}
