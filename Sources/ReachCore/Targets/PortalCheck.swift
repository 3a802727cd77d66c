import ReachSupport

/// The captive-portal check URL as a probe: an HTTP GET whose expected answer (a 204, a known body)
/// only the open internet gives. Any other answer — a redirect, a login page, a 200 instead of a
/// 204 — is a portal's.
///
/// It is probed with the targets, on the same scheduler and cadence, so that signing in is seen
/// within one interval; but it is not a target: it never makes the server healthy or not.
package struct PortalCheck: Sendable, Hashable {
    /// The name its probes carry: it cannot be a target's, as target names have no spaces.
    package static let probeName = "captive portal check"

    /// The probe of the check URL, named ``probeName``.
    package var target: ProbeTarget

    package init(target: ProbeTarget) {
        var target = target
        target.name = Self.probeName
        self.target = target
    }

    /// The check URL.
    package var url: String {
        if case .http(let check) = target.check { return check.url }
        return ""
    }

    /// What one probe of the check URL says: `nil` when it learned nothing (the network failed it
    /// before any answer: no route, a timeout, a refusal), else whether a portal answered and where
    /// it asks a person to sign in (the redirect's `Location`, resolved against the check URL, else
    /// the check URL itself).
    func finding(_ result: ProbeResult) -> Finding? {
        guard let failure = result.failure else { return .open }
        switch failure.reason {
        case .httpStatus, .unexpectedBody:
            return .intercepted(signInURL: failure.location.flatMap { HTTPURL(url)?.resolving($0)?.text } ?? url)
        default: return nil
        }
    }

    enum Finding: Sendable, Hashable {
        case open
        case intercepted(signInURL: String)
    }
}
