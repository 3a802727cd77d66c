import Foundation
import ReachTesting

extension FaultMatrix {
    /// Signing in is seen at the next probe round: within one probe interval plus 100 ms of the
    /// portal letting the host through.
    static let signInBound: Duration = MatrixRun.interval + .milliseconds(100)

    /// Captive portals built as real ones are (nftables DNAT to a portal web server): reachd says
    /// `captive_portal` with where to sign in, never `connected`, and `connected` again at the
    /// next round once the person has signed in (the DNAT rule deleted), with one restoration.
    func portalCases(_ run: MatrixRun, portal: PortalServer) async {
        let network = run.network
        let signIn = { try await network.setPortal(false) }
        await portalCase(
            run,
            "redirecting portal, check URL set",
            evidence: "check_url",
            url: PortalServer.signInURL,
            apply: {
                try await portal.set("redirect")
                try await network.setPortal(true)
            },
            restore: signIn
        )
        await portalCase(
            run,
            "login page answering 200, check URL set",
            evidence: "check_url",
            url: PortalServer.checkURL,
            apply: {
                try await portal.set("login")
                try await network.setPortal(true)
            },
            restore: signIn
        )

        // An HTTPS target (added by reload) whose handshake the portal answers with its own certificate.
        let path = run.daemon.configPath
        let original = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        let withTLS = run.daemon.configuration(original, addingTLSTarget: "other.test")
        let withoutCheck = original.components(separatedBy: "captive_portal:\n").first ?? original
        do {
            try await reload(run, withTLS)
            await portalCase(
                run,
                "HTTPS target intercepted, check URL set",
                evidence: "tls_intercepted",
                url: PortalServer.checkURL,
                apply: {
                    try await portal.set("login")
                    try await network.setPortal(true)
                },
                restore: signIn
            )
            try await reload(run, withoutCheck)
            await portalCase(
                run,
                "redirecting portal, no check URL",
                evidence: "redirect",
                url: PortalServer.signInURL,
                apply: {
                    try await portal.set("redirect")
                    try await network.setPortal(true)
                },
                restore: signIn
            )
            try await reload(run, original)
        } catch {
            run.finish(
                MatrixCase(
                    group: "portal",
                    name: "reloads for the portal cases",
                    expected: "applied",
                    failure: "\(error)"
                )
            )
        }
    }

    private func portalCase(
        _ run: MatrixRun,
        _ name: String,
        evidence: String,
        url: String,
        apply: () async throws -> Void,
        restore: () async throws -> Void
    ) async {
        let start = ContinuousClock.now
        var signedIn = ContinuousClock.now + .seconds(3600)
        await run.fault(
            "portal",
            name,
            reason: "captive_portal",
            bound: MatrixRun.answerBound,
            restoreBound: Self.signInBound,
            apply: apply,
            restore: {
                signedIn = .now
                try await restore()
            }
        )
        guard var row = run.cases.popLast() else { return }
        // The evidence the verdict settled on while the portal was there: an HTTPS target's failed
        // handshake names the check URL's interception more precisely once that target's probe has
        // failed too. Not after signing in: the check URL answers then, while a target's last answer
        // may still be the portal's redirect until its next probe (a captive_portal of `redirect`
        // evidence for up to an interval, as reachd has no newer evidence of the target yet).
        let seen = run.observer.all.last { $0.at >= start && $0.at < signedIn && $0.reason == "captive_portal" }
        if row.passed, let seen, seen.portalEvidence != evidence || seen.portalURL != url {
            row.failure =
                "the portal was told as \(seen.portalEvidence ?? "nil") with sign-in URL \(seen.portalURL ?? "nil"), not \(evidence) with \(url)"
        }
        row.expected =
            "disconnected/captive_portal (\(evidence)), connected within \(MatrixCase.seconds(Optional(Self.signInBound))) of signing in"
        run.cases.append(row)
    }

    /// Writes `configuration` and applies it with SIGHUP, waiting for the reload's line. A target
    /// the reload adds starts unknown (`awaiting_probe` until its first probe): the truth is
    /// unsettled until then.
    private func reload(_ run: MatrixRun, _ configuration: String) async throws {
        let reloads = run.daemon.log.components(separatedBy: "configuration reloaded").count
        run.ledger.mark(.unsettled, at: .now, bound: .zero, "portal: reload")
        try configuration.write(toFile: run.daemon.configPath, atomically: true, encoding: .utf8)
        run.daemon.signal(SIGHUP)
        try await waitUntil("reachd reloads", timeout: .seconds(10)) {
            run.daemon.log.components(separatedBy: "configuration reloaded").count > reloads
        }
        run.ledger.mark(.up, at: .now, bound: MatrixRun.restoreBound, "portal: reloaded")
        try await Task.sleep(for: MatrixRun.restoreBound)  // the ledger allows the reload this long to settle: the window it judges
    }
}
