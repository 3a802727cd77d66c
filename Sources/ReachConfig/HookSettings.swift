import ReachCore

/// Where hook scripts live and how long each may run: the configuration's `hooks` section.
///
/// Hooks are for restoration work that belongs to other programs (flush a spool, restart a VPN,
/// resume a sync), the way NetworkManager's dispatcher scripts are.
package struct HookSettings: Sendable, Hashable {
    /// Executables run, in lexical order, on every `disconnected` → `connected` transition.
    package var restoredDirectory: String
    /// Executables run, in lexical order, on every `connected` → `disconnected` transition.
    package var lostDirectory: String
    /// How long one hook may run before its process group gets `SIGTERM`.
    package var timeout: Duration
    /// How long after `SIGTERM` the group gets `SIGKILL`.
    package var killGrace: Duration

    /// The defaults are NetworkManager-dispatcher-like directories, 30 s per hook and 5 s of grace.
    package init(
        restoredDirectory: String = "/etc/reachd/restored.d",
        lostDirectory: String = "/etc/reachd/lost.d",
        timeout: Duration = .seconds(30),
        killGrace: Duration = .seconds(5)
    ) {
        self.restoredDirectory = restoredDirectory
        self.lostDirectory = lostDirectory
        self.timeout = timeout
        self.killGrace = killGrace
    }

    /// The directory of hooks for `direction`.
    package func directory(for direction: TransitionDirection) -> String {
        switch direction {
        case .restored: restoredDirectory
        case .lost: lostDirectory
        }
    }
}
