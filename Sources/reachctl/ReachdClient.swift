import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import ReachCore
import ReachServer

/// Where reachd's status API is, and the token it wants.
struct ReachdEndpoint: Sendable {
    static let defaultURL = "http://127.0.0.1:9780"

    let base: String
    let token: String?

    init(base: String, token: String?) {
        var base = base
        while base.hasSuffix("/") { base.removeLast() }
        self.base = base
        self.token = token
    }

    /// `base` is an http(s) URL, or the path of reachd's unix socket (`/run/reachd/reachd.sock`).
    func url(_ path: String) -> String {
        guard base.hasPrefix("/") else { return base + path }
        let socket = base.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? base
        return "http+unix://\(socket)\(path)"
    }
}

/// Why reachctl got no status document from reachd.
struct ReachdUnreachable: Error, CustomStringConvertible {
    let description: String
}

/// A thin client of reachd's status API.
struct ReachdClient: Sendable {
    let endpoint: ReachdEndpoint
    let http: HTTPClient

    /// Runs `body` with a client whose connections time out like a command-line tool's should:
    /// 3 s to connect, no silent retries, and an event stream that is silent for 3 heartbeats (45 s) counts as dead.
    static func with<Result: Sendable>(
        _ endpoint: ReachdEndpoint, _ body: (ReachdClient) async throws -> Result
    ) async throws -> Result {
        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(connect: .seconds(3), read: .seconds(45))
        // Report "connection refused" at once rather than retrying until the request's deadline:
        // the commands decide for themselves whether and when to try again.
        configuration.connectionPool.retryConnectionEstablishment = false
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let client = ReachdClient(endpoint: endpoint, http: http)
        let result: Result
        do {
            result = try await body(client)
        } catch {
            try? await http.shutdown()
            throw error
        }
        try? await http.shutdown()
        return result
    }

    private func request(_ method: HTTPMethod, _ path: String) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: endpoint.url(path))
        request.method = method
        if let token = endpoint.token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        return request
    }

    /// Asks for one status document; returns it with the bytes as received.
    func document(_ method: HTTPMethod, _ path: String, timeout: TimeAmount) async throws -> (StatusDocument, String) {
        let response: HTTPClientResponse
        let bytes: ByteBuffer
        do {
            response = try await http.execute(request(method, path), timeout: timeout)
            bytes = try await response.body.collect(upTo: 16 << 20)
        } catch {
            throw ReachdUnreachable(description: "cannot reach reachd at \(endpoint.base): \(Self.describe(error))")
        }
        let text = String(buffer: bytes)
        guard response.status == .ok else {
            throw ReachdUnreachable(description: "reachd at \(endpoint.base) answered \(method) \(path) with \(response.status)\(Self.apiMessage(text))")
        }
        do {
            return (try JSONDecoder().decode(StatusDocument.self, from: Data(text.utf8)), text)
        } catch {
            throw ReachdUnreachable(description: "\(endpoint.base)\(path) did not answer a reachd status document: \(error)")
        }
    }

    /// Follows `/v1/events`, calling `onEvent` for each event until it returns `false` (then returns
    /// normally) or the stream ends (then throws ``ReachdUnreachable``).
    func events(after lastEventID: String?, onEvent: (ServerSentEvent) async throws -> Bool) async throws {
        var request = request(.GET, "/v1/events")
        request.headers.add(name: "Accept", value: "text/event-stream")
        if let lastEventID { request.headers.add(name: "Last-Event-ID", value: lastEventID) }
        let response: HTTPClientResponse
        do {
            response = try await http.execute(request, deadline: .distantFuture)
        } catch {
            throw ReachdUnreachable(description: "cannot reach reachd at \(endpoint.base): \(Self.describe(error))")
        }
        guard response.status == .ok else {
            let text = (try? await response.body.collect(upTo: 1 << 20)).map { String(buffer: $0) } ?? ""
            throw ReachdUnreachable(description: "reachd at \(endpoint.base) answered GET /v1/events with \(response.status)\(Self.apiMessage(text))")
        }
        var parser = EventStreamParser()
        do {
            for try await chunk in response.body {
                for event in try parser.feed(chunk.readableBytesView) {
                    guard try await onEvent(event) else { return }
                }
            }
        } catch let error as ReachdUnreachable {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw ReachdUnreachable(description: "the event stream from \(endpoint.base) broke: \(Self.describe(error))")
        }
        throw ReachdUnreachable(description: "reachd at \(endpoint.base) closed the event stream")
    }

    /// The `error` of reachd's JSON error body, if there is one.
    private static func apiMessage(_ text: String) -> String {
        struct Body: Decodable { var error: String }
        guard let body = try? JSONDecoder().decode(Body.self, from: Data(text.utf8)) else {
            return text.isEmpty ? "" : ": \(text.prefix(200))"
        }
        return ": \(body.error)"
    }

    /// An error in words a person can act on.
    static func describe(_ error: any Error) -> String {
        let text = String(describing: error)
        if text.contains("Connection refused") || text.contains("errno: 111") { return "connection refused" }
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout: return "connect timed out"
            case .readTimeout: return "no data for too long (read timed out)"
            case .deadlineExceeded: return "timed out"
            case .remoteConnectionClosed: return "the connection was closed"
            default: break
            }
        }
        return text
    }
}
