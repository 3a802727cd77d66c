import ArgumentParser
import ReachAPI
import ReachClient
import ReachCore
import ReachPOSIX
import ReachSupport

/// The human summary of a ``StatusDocument`` that `status` and `check` print.
enum Summary {
    /// Prints the document `ask` gets (as reachd sent it with `json`), and exits with the status its
    /// state calls for: 2 when reachd cannot be reached.
    static func report(json: Bool, _ ask: () async throws -> StatusAnswer) async throws {
        let answer: StatusAnswer
        do {
            answer = try await ask()
        } catch let error as ReachdClientError {
            Output.error("reachctl: \(error.description)")
            throw ExitCode(ExitStatus.unreachable)
        }
        if json {
            Output.line(answer.json.hasSuffix("\n") ? String(answer.json.dropLast()) : answer.json)
        } else {
            Output.line(render(answer.document))
        }
        throw ExitCode(
            answer.document.state == ConnectivityState.connected.rawValue
                ? ExitStatus.connected : ExitStatus.notConnected
        )
    }

    static func render(_ document: StatusDocument, now: WallTime = WallTime.now()) -> String {
        var lines = [document.headline]
        lines.append("  \(document.reasonDetail)")
        for (fact, codes) in document.factValues where fact.inSummary && !codes.isEmpty {
            lines.append(fact.summaryLine(codes))
        }
        var since = document.since
        if let time = RFC3339.wallTime(from: document.since) {
            since += " (\(ago(now.sinceEpoch - time.sinceEpoch)))"
        }
        lines.append("since:      \(since)")
        if let portal = document.portal { lines.append(contentsOf: portalLines(portal, now: now)) }
        lines.append(
            "interfaces: \(document.usableInterfaces.isEmpty ? "none usable" : document.usableInterfaces.joined(separator: ", "))"
        )
        lines.append(contentsOf: pathLines(document))
        if document.targets.isEmpty {
            lines.append("targets:    none")
        } else {
            lines.append("targets:")
            let nameWidth = document.targets.map(\.name.count).max() ?? 0
            let kindWidth = document.targets.map(\.kind.count).max() ?? 0
            let healthWidth = document.targets.map(\.health.count).max() ?? 0
            for target in document.targets {
                var line =
                    "  " + pad(target.name, nameWidth) + "  " + pad(target.kind, kindWidth) + "  "
                    + pad(target.health, healthWidth)
                line += "  " + targetDetail(target)
                if let extra = kindDetail(target) { line += ", " + extra }
                if let certificate = target.certificate { line += ", " + certificateDetail(certificate, now: now) }
                while line.hasSuffix(" ") { line.removeLast() }
                lines.append(line)
            }
        }
        return lines.joined(separator: "\n")
    }

    /// Where to sign in, and when a portal's session ends.
    static func portalLines(_ portal: StatusDocument.Portal, now: WallTime) -> [String] {
        var lines: [String] = []
        if portal.captive {
            lines.append(
                "sign in:    \(portal.userPortalURL ?? "the network's login page (its address is not known)") (captive portal, \(portal.evidence))"
            )
        } else {
            lines.append("portal:     signed in\(portal.userPortalURL.map { " at \($0)" } ?? "")")
        }
        if let venue = portal.venueInfoURL { lines.append("venue:      \(venue)") }
        if let end = portal.sessionEndsAt, let time = RFC3339.wallTime(from: end) {
            let left = Int((time.sinceEpoch - now.sinceEpoch).components.seconds)
            lines.append("session:    ends \(end) (\(left > 0 ? "in \(left / 60)m\(left % 60)s" : "now"))")
        }
        if let bytes = portal.bytesRemaining { lines.append("data left:  \(bytes) bytes") }
        return lines
    }

    /// `12.3 ms` when healthy; `connection_refused in connect: connection refused` when not.
    static func targetDetail(_ target: StatusDocument.Target) -> String {
        if target.health != "healthy", let reason = target.reason {
            var text = reason
            if let phase = target.phase { text += " in \(phase)" }
            if let detail = target.detail, !detail.isEmpty { text += ": \(detail)" }
            return text
        }
        if let latency = target.latencySeconds { return milliseconds(latency) }
        return target.health == "unknown" ? "no result yet" : ""
    }

    /// `cert expires 2026-12-01 (in 3 days)`, `cert expired 2026-11-25 (1 day ago)`.
    static func certificateDetail(_ certificate: StatusDocument.Certificate, now: WallTime) -> String {
        let day = certificate.notAfter.prefix(10)
        guard let notAfter = RFC3339.wallTime(from: certificate.notAfter) else { return "cert expires \(day)" }
        let expiry = ServerCertificate(notAfter: notAfter, subject: certificate.subject, issuer: certificate.issuer)
            .expiry(relativeTo: now)
        return "cert \(notAfter > now ? "expires" : "expired") \(day) (\(expiry))"
    }

    static func milliseconds(_ seconds: Double) -> String {
        let ms = seconds * 1000
        return ms < 10 ? "\(fixed(ms, digits: 2)) ms" : "\(fixed(ms, digits: 1)) ms"
    }

    /// `value` rounded half away from zero to `digits` decimals, written without an exponent.
    static func fixed(_ value: Double, digits: Int) -> String {
        let scale = (0..<digits).reduce(1.0) { result, _ in result * 10 }
        let scaled = Int64((abs(value) * scale).rounded())
        let whole = scaled / Int64(scale)
        let fraction = String(scaled % Int64(scale))
        return (value < 0 && scaled != 0 ? "-" : "") + "\(whole)."
            + String(repeating: "0", count: digits - fraction.count) + fraction
    }

    static func ago(_ interval: Duration) -> String {
        let seconds = max(0, Int(interval.components.seconds))
        if seconds < 60 { return "\(seconds)s ago" }
        if seconds < 3600 { return "\(seconds / 60)m\(seconds % 60)s ago" }
        if seconds < 86400 { return "\(seconds / 3600)h\(seconds % 3600 / 60)m ago" }
        return "\(seconds / 86400)d\(seconds % 86400 / 3600)h ago"
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}
