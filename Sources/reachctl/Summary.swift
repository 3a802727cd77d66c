import Foundation
import ArgumentParser
import NIOHTTP1
import ReachServer

/// The human summary of a ``StatusDocument`` that `status` and `check` print.
enum Summary {
    /// Fetches one document, prints it, and exits with the status its state calls for.
    static func fetchAndReport(endpoint: ReachdEndpoint, method: HTTPMethod, path: String, json: Bool) async throws {
        let answer: (StatusDocument, String)
        do {
            // A check runs every probe, so it may take as long as the slowest probe's timeout.
            answer = try await ReachdClient.with(endpoint) { client in
                try await client.document(method, path, timeout: method == .POST ? .seconds(60) : .seconds(10))
            }
        } catch let error as ReachdUnreachable {
            Output.error("reachctl: \(error.description)")
            throw ExitCode(ExitStatus.unreachable)
        }
        let (document, text) = answer
        if json {
            Output.line(text.hasSuffix("\n") ? String(text.dropLast()) : text)
        } else {
            Output.line(render(document))
        }
        throw ExitCode(exitStatus(for: document))
    }

    static func exitStatus(for document: StatusDocument) -> Int32 {
        document.state == "connected" ? ExitStatus.connected : ExitStatus.notConnected
    }

    /// `connected (healthy)`, `disconnected: connection_refused (target server)`, `unknown: starting`.
    static func headline(_ document: StatusDocument) -> String {
        if document.state == "connected" { return "connected (\(document.reason))" }
        var line = "\(document.state): \(document.reason)"
        if let target = failingTarget(document) { line += " (target \(target.name))" }
        return line
    }

    /// The target the reason is about, when it is a target's failure.
    static func failingTarget(_ document: StatusDocument) -> StatusDocument.Target? {
        let prefix = "target "
        if document.reasonDetail.hasPrefix(prefix) {
            let rest = document.reasonDetail.dropFirst(prefix.count)
            if let match = document.targets.first(where: { rest.hasPrefix($0.name + ":") }) { return match }
        }
        return document.targets.first { $0.health == "unhealthy" && $0.reason == document.reason }
    }

    static func render(_ document: StatusDocument, now: Date = Date()) -> String {
        var lines = [headline(document)]
        lines.append("  \(document.reasonDetail)")
        var since = document.since
        if let date = RFC3339Text.date(from: document.since) {
            since += " (\(ago(now.timeIntervalSince(date))))"
        }
        lines.append("since:      \(since)")
        lines.append("interfaces: \(document.usableInterfaces.isEmpty ? "none usable" : document.usableInterfaces.joined(separator: ", "))")
        if document.targets.isEmpty {
            lines.append("targets:    none")
        } else {
            lines.append("targets:")
            let nameWidth = document.targets.map(\.name.count).max() ?? 0
            let kindWidth = document.targets.map(\.kind.count).max() ?? 0
            let healthWidth = document.targets.map(\.health.count).max() ?? 0
            for target in document.targets {
                var line = "  " + pad(target.name, nameWidth) + "  " + pad(target.kind, kindWidth) + "  " + pad(target.health, healthWidth)
                line += "  " + targetDetail(target)
                while line.hasSuffix(" ") { line.removeLast() }
                lines.append(line)
            }
        }
        return lines.joined(separator: "\n")
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

    static func milliseconds(_ seconds: Double) -> String {
        let ms = seconds * 1000
        return ms < 10 ? String(format: "%.2f ms", ms) : String(format: "%.1f ms", ms)
    }

    static func ago(_ interval: TimeInterval) -> String {
        let seconds = max(0, Int(interval.rounded(.down)))
        if seconds < 60 { return "\(seconds)s ago" }
        if seconds < 3600 { return "\(seconds / 60)m\(seconds % 60)s ago" }
        if seconds < 86400 { return "\(seconds / 3600)h\(seconds % 3600 / 60)m ago" }
        return "\(seconds / 86400)d\(seconds % 86400 / 3600)h ago"
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}

/// RFC 3339 timestamps with milliseconds, in UTC.
enum RFC3339Text {
    static func date(from text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }

    static func string(from date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
