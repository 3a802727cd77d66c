import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import ReachTesting
import Synchronization

/// One Server-Sent Events message as a client sees it.
struct SSEMessage: Sendable, Equatable {
    var id: String?
    var event: String?
    var data: String?
    /// The text of a `:` comment line (a heartbeat).
    var comment: String?

    var isHeartbeat: Bool { comment?.trimmingCharacters(in: .whitespaces) == "heartbeat" }

    /// The `data` line as a JSON object.
    var json: [String: Any] {
        guard let data, let object = try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any] else {
            return [:]
        }
        return object
    }

    init(block: Substring) {
        for line in block.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix(":") {
                comment = String(line.dropFirst())
                continue
            }
            let (field, value) =
                line.firstIndex(of: ":").map { (line[..<$0], line[line.index(after: $0)...]) } ?? (line, "")
            let text = String(value.hasPrefix(" ") ? value.dropFirst() : value)
            switch field {
            case "id": id = text
            case "event": event = text
            case "data": data = data.map { $0 + "\n" + text } ?? text
            default: break
            }
        }
    }
}

/// A streaming SSE client on AsyncHTTPClient: it reads the body in a task of its own and keeps
/// what it parsed, so a test can wait for messages with a timeout.
final class EventStreamClient: Sendable {
    let status: Int
    let headers: [(String, String)]
    private let state = Mutex<(messages: [SSEMessage], text: String, ended: Bool, error: String?)>(([], "", false, nil))
    private let reader: Mutex<Task<Void, Never>?> = Mutex(nil)

    private init(status: Int, headers: [(String, String)]) {
        self.status = status
        self.headers = headers
    }

    static func open(
        _ url: String,
        headers: [(String, String)] = [],
        client: HTTPClient = .shared
    ) async throws -> EventStreamClient {
        var request = HTTPClientRequest(url: url)
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await client.execute(request, timeout: .seconds(10))
        let stream = EventStreamClient(
            status: Int(response.status.code),
            headers: response.headers.map { ($0.name, $0.value) }
        )
        let body = response.body
        let task = Task {
            do {
                for try await chunk in body {
                    stream.append(String(buffer: chunk))
                }
                stream.state.withLock { $0.ended = true }
            } catch {
                stream.state.withLock {
                    $0.ended = true
                    $0.error = "\(error)"
                }
            }
        }
        stream.reader.withLock { $0 = task }
        return stream
    }

    private func append(_ text: String) {
        state.withLock { state in
            state.text += text
            while let range = state.text.range(of: "\n\n") {
                let block = state.text[..<range.lowerBound]
                state.messages.append(SSEMessage(block: block))
                state.text.removeSubrange(..<range.upperBound)
            }
        }
    }

    var messages: [SSEMessage] { state.withLock { $0.messages } }
    var events: [SSEMessage] { messages.filter { $0.event != nil || $0.data != nil } }
    var ended: Bool { state.withLock { $0.ended } }
    var error: String? { state.withLock { $0.error } }

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    /// Waits until at least `count` events (not comments) have arrived; returns them all.
    @discardableResult
    func waitForEvents(_ count: Int, timeout: Duration = .seconds(10)) async throws -> [SSEMessage] {
        try await waitUntil("\(count) event(s) on the stream (have \(events.count))", timeout: timeout) {
            self.events.count >= count
        }
        return events
    }

    /// Waits until an event with this id has arrived.
    func waitForEvent(id: UInt64, timeout: Duration = .seconds(10)) async throws {
        try await waitUntil("event \(id) on the stream", timeout: timeout) {
            self.events.contains { $0.id == String(id) }
        }
    }

    func waitForEnd(timeout: Duration = .seconds(10)) async throws {
        try await waitUntil("the stream to end", timeout: timeout) { self.ended }
    }

    func close() async {
        let task = reader.withLock { $0 }
        task?.cancel()
        await task?.value
    }
}
