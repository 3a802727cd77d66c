/// Callbacks and other reactions: registration, and the runs the reaction rule decides (see
/// <doc:TheReactionRule> and ``ReactionTable``).
extension ConnectivityMonitor {
    /// Registers `body` to run on every `disconnected` → `connected` transition: warm a cache,
    /// resume pending uploads, reconnect a session.
    ///
    /// Each callback gets `timeout` (default 30 s), after which it is cancelled and reported as
    /// timed out. A failing or hanging callback delays neither the others nor the next transition.
    /// It runs once per transition, never twice at once; transitions that arrive while it runs are
    /// coalesced into one more run at the latest state, or skipped and reported (see
    /// ``addReaction(named:on:timeout:_:)``).
    @discardableResult
    package func onConnectivityRestored(
        named name: String? = nil,
        timeout: Duration? = nil,
        _ body: @escaping @Sendable (ConnectivityTransition) async throws -> Void
    ) -> CallbackID {
        addReaction(named: name, on: [.restored], timeout: timeout ?? configuration.callbackTimeout, body)
    }

    /// Registers `body` to run on every `connected` → `disconnected` transition: pause a queue,
    /// switch to offline mode. Same guarantees as ``onConnectivityRestored(named:timeout:_:)``.
    @discardableResult
    package func onConnectivityLost(
        named name: String? = nil,
        timeout: Duration? = nil,
        _ body: @escaping @Sendable (ConnectivityTransition) async throws -> Void
    ) -> CallbackID {
        addReaction(named: name, on: [.lost], timeout: timeout ?? configuration.callbackTimeout, body)
    }

    /// Registers a reaction to transitions in any of `directions`: what hook directories and
    /// webhooks use, and the rule every callback follows.
    ///
    /// - It runs once for each transition of its directions, and never twice at once.
    /// - Transitions that arrive while it runs wait. When the run ends, if the latest of them is
    ///   of its directions, it runs once more with that latest one (the report's `coalesced` counts
    ///   the earlier ones of its directions it stands for); otherwise nothing runs and a
    ///   ``CallbackReport/Outcome/skipped`` report counts them. Both are logged.
    /// - A run lasts until the body really returns: one that ignores cancellation after its
    ///   `timeout` is reported as timed out at once, and its reaction stays busy until it ends.
    ///
    /// A reaction for both directions (a webhook) therefore always ends at the latest state, in order.
    ///
    /// - Parameter timeout: `nil` for none, when the body bounds its own running time.
    @discardableResult
    package func addReaction(
        named name: String? = nil,
        on directions: Set<TransitionDirection>,
        timeout: Duration?,
        _ body: @escaping @Sendable (ConnectivityTransition) async throws -> Void
    ) -> CallbackID {
        reactions.add(named: name, on: directions, timeout: timeout, body)
    }

    /// Removes a callback or reaction from future transitions; a run already under way continues
    /// to its end. Returns whether it was registered.
    @discardableResult
    package func removeCallback(_ id: CallbackID) -> Bool {
        reactions.remove(id)
    }
}
