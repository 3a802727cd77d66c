import Dispatch
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded
import ReachAPI
import ReachCore
import ReachMetrics
import ReachPOSIX
import ReachServer
import ReachSupport
import Synchronization

extension FuzzInput {
    /// The token of the fuzzed server that requires one.
    static let statusToken = "s3cret-T0ken"

    /// The status API's requests, through reachd's real router (`StatusServer.makeRouter()`: its
    /// error, body-limit, bearer-token or loopback-host middleware, its routes and their
    /// parameter readers: `Last-Event-ID`, history's query, the page's token and cookie).
    ///
    /// The input is a request as text: `METHOD target` on the first line, `Name: value` lines
    /// (`Host` becomes the authority), a blank line, the body. The HTTP/1 parsing before it is
    /// NIO's; what reaches the router is any method, path and fields NIO would let through. Each
    /// request goes to a server with a token and to one without (on a loopback TCP address).
    ///
    /// The server with a token must never answer a protected path with success (2xx or 3xx) to a
    /// request that does not hold the token anywhere (percent-decoded).
    package static func statusAPI(_ bytes: [UInt8]) {
        guard let request = statusRequest(bytes) else { return }
        let bodyBytes = statusRequestBody(bytes)
        let holdsToken = percentDecoded(bytes).contains(Array(statusToken.utf8))
        let (withToken, loopback) = statusServers
        let guarded = respond(withToken, request, body: bodyBytes)
        _ = respond(loopback, request, body: bodyBytes)
        let path = Request(head: request, body: RequestBody(buffer: ByteBuffer())).uri.path
        let isOpen = StatusAPI.routes.contains { $0.isOpen && $0.path == path }
        require(
            holdsToken || isOpen || !(200..<400).contains(guarded),
            "\(request.method) \(request.path ?? "") answered \(guarded) without the token"
        )
    }

    /// The two routers the requests go to: with a token, and without one on loopback TCP.
    private static let statusServers: (RouterResponder<BasicRequestContext>, RouterResponder<BasicRequestContext>) = {
        let logger = Logger(label: "reachd.fuzz") { _ in SwiftLogNoOpLogHandler() }
        let targets = [
            ProbeTarget(
                name: "server",
                check: .http(HTTPCheck(url: "http://192.0.2.7/", endpoint: HostPort(host: "192.0.2.7", port: 80)))
            )
        ]
        let monitor = ConnectivityMonitor(
            configuration: ConnectivityMonitor.Configuration(targets: targets),
            clock: MonitorClock(ContinuousClock(), wallTime: { WallTime.now() }),
            logger: logger
        )
        func server(_ token: Secret?) -> RouterResponder<BasicRequestContext> {
            StatusServer(
                monitor: monitor,
                metrics: ReachMetrics(targets: targets),
                address: .tcp(host: "127.0.0.1", port: 0),
                bearerToken: token,
                checkWaitLimit: { .milliseconds(1) },
                logger: logger
            ).makeRouter().buildResponder()
        }
        return (server(Secret(statusToken)), server(nil))
    }()

    /// The request head the input's text describes; `nil` when NIO would not have passed it on.
    static func statusRequest(_ bytes: [UInt8]) -> HTTPRequest? {
        let head = bytes.split(separator: UInt8(ascii: "\n"), maxSplits: 64, omittingEmptySubsequences: false).prefix {
            !$0.isEmpty
        }
        guard let line = head.first else { return nil }
        let words = line.split(separator: UInt8(ascii: " "), maxSplits: 1)
        guard words.count == 2, let method = HTTPRequest.Method(text(words[0])) else { return nil }
        var fields = HTTPFields()
        var authority: String?
        for fieldLine in head.dropFirst() {
            guard let colon = fieldLine.firstIndex(of: UInt8(ascii: ":")),
                let name = HTTPField.Name(text(fieldLine[..<colon]))
            else { continue }
            let value = text(
                fieldLine[fieldLine.index(after: colon)...].drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop {
                    $0 == 0x20 || $0 == 0x09 || $0 == 0x0D
                }.reversed()
            )
            if name.canonicalName == "host" {
                authority = value
            } else {
                fields.append(HTTPField(name: name, value: value))
            }
        }
        return HTTPRequest(
            method: method,
            scheme: "http",
            authority: authority,
            path: text(words[1]),
            headerFields: fields
        )
    }

    /// What follows the head's blank line.
    static func statusRequestBody(_ bytes: [UInt8]) -> [UInt8] {
        guard
            let blank = bytes.indices.dropLast().first(where: {
                bytes[$0] == UInt8(ascii: "\n") && bytes[$0 + 1] == UInt8(ascii: "\n")
            })
        else { return [] }
        return Array(bytes[(blank + 2)...])
    }

    /// `%XX` decoded wherever it appears: what a reader of any part of the request may see.
    static func percentDecoded(_ bytes: [UInt8]) -> [UInt8] {
        var decoded: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                let value = UInt8(text(bytes[(index + 1)...(index + 2)]), radix: 16)
            {
                decoded.append(value)
                index += 3
            } else {
                decoded.append(bytes[index])
                index += 1
            }
        }
        return decoded
    }

    /// The status code `responder` answers `head` with (its body is not read: an event stream never ends).
    private static func respond(
        _ responder: RouterResponder<BasicRequestContext>,
        _ head: HTTPRequest,
        body: [UInt8]
    ) -> Int {
        let request = Request(head: head, body: RequestBody(buffer: ByteBuffer(bytes: body)))
        return waitFor {
            // The channel a request came on, as Hummingbird's context holds it; finished after
            // the answer, or its pipeline and it keep each other alive.
            // NIOAsyncTestingChannel, as HummingbirdTesting uses: the task may resume on another
            // thread, which an EmbeddedChannel forbids.
            let channel = NIOAsyncTestingChannel()
            let context = BasicRequestContext(
                source: ApplicationRequestContextSource(
                    channel: channel,
                    logger: Logger(label: "reachd.fuzz") { _ in SwiftLogNoOpLogHandler() }
                )
            )
            let status: Int
            do {
                status = Int(try await responder.respond(to: request, context: context).status.code)
            } catch let error as any HTTPResponseError {
                status = Int(error.status.code)
            } catch {
                status = 500
            }
            _ = try? await channel.finish(acceptAlreadyClosed: true)
            return status
        }
    }

    /// Runs `body` on the concurrency pool and blocks this (libFuzzer's) thread until it returns.
    static func waitFor<Value: Sendable>(_ body: @escaping @Sendable () async -> Value) -> Value {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Value?>(nil)
        Task {
            let value = await body()
            result.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        guard let value = result.withLock({ $0 }) else { preconditionFailure("an awaited body returned nothing") }
        return value
    }
}
