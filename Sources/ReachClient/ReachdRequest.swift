import ReachPOSIX

/// One request to reachd's status API: a TCP or unix-socket connection (``ReachdConnection``),
/// HTTP/1.1 (``HTTPResponseReader``), the body of a `200` handed over as it arrives, then the
/// connection closed.
///
/// The connection's blocking calls run on a thread of their own, so waiting for reachd never
/// occupies a thread of Swift's cooperative pool; cancelling the calling task rings the thread's
/// doorbell, which ends them at once.
struct ReachdRequest: Sendable {
    let endpoint: ReachdEndpoint
    var method = "GET"
    let path: String
    var headers: [(String, String)] = []
    let connectTimeout: Duration
    /// How long the answer may go without a byte before the request fails as silent.
    let silenceLimit: Duration

    /// The most of an error answer's body read, for its message.
    private static let errorBodyLimit = 64 << 10

    /// Sends the request and hands each part of a `200` answer's body to `body`; returns when the
    /// answer is complete.
    ///
    /// - Throws: ``ReachdClientError`` for an endpoint that cannot be used, an answer other than
    ///   `200`, one cut short, silence, a connection that could not be made or broke; or what `body` throws.
    func run(_ body: ([UInt8]) async throws -> Void) async throws {
        let address: ReachdEndpoint.Address
        do {
            address = try endpoint.address()
        } catch {
            throw ReachdClientError.endpoint(error)
        }
        let doorbell: ShutdownDoorbell
        do { doorbell = try ShutdownDoorbell() } catch { throw ReachdClientError.unreachable(endpoint, error.reason) }
        let (parts, feed) = AsyncThrowingStream<HTTPResponseReader.Part, any Error>.makeStream()
        let exchange = Exchange(request: self, address: address, doorbell: doorbell, feed: feed)
        do {
            try DedicatedThread.start(named: "reachd-client") { exchange.run() }
        } catch {
            throw ReachdClientError.unreachable(endpoint, error.reason)
        }
        // However this ends, the thread stops: cancelled, done, or what `body` threw.
        defer { doorbell.ring() }
        try await withTaskCancellationHandler {
            var refusal: (status: Int, reason: String, body: [UInt8])?
            do {
                for try await part in parts {
                    switch part {
                    case .head(let status, let reason) where status != 200:
                        refusal = (status, reason, [])
                    case .head:
                        continue
                    case .body(let chunk):
                        if refusal != nil {
                            if refusal!.body.count < Self.errorBodyLimit { refusal!.body += chunk }
                        } else {
                            do {
                                try await body(chunk)
                            } catch {
                                throw FromBody(error: error)
                            }
                        }
                    case .end:
                        if let refusal {
                            throw ReachdClientError.refused(
                                endpoint,
                                method,
                                path,
                                status: refusal.status,
                                reason: refusal.reason,
                                body: refusal.body
                            )
                        }
                        return
                    }
                }
            } catch let error as FromBody {
                throw error.error
            } catch let error as ReachdClientError {
                throw error
            } catch ReachdConnection.Failure.cancelled {
                throw CancellationError()
            } catch let failure as ReachdConnection.Failure {
                throw ReachdClientError(failure, endpoint: endpoint, path: path, silenceLimit: silenceLimit)
            } catch let malformed as HTTPResponseReader.Malformed {
                let why =
                    malformed.isCutShort ? "reachd closed the connection" : "the answer is not HTTP (\(malformed))"
                throw ReachdClientError.broke(endpoint, path, why)
            } catch  where Task.isCancelled {
                throw CancellationError()
            } catch {
                throw ReachdClientError.broke(endpoint, path, "\(error)")
            }
            try Task.checkCancellation()
            throw ReachdClientError.broke(endpoint, path, "reachd closed the connection")
        } onCancel: {
            doorbell.ring()
        }
    }

    /// The request as sent.
    fileprivate func encoded(host: String) -> [UInt8] {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\n"
        if let authorization = endpoint.authorization { head += "Authorization: \(authorization)\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if method == "POST" { head += "Content-Length: 0\r\n" }
        return Array((head + "\r\n").utf8)
    }

    /// The connection's work, on its thread: connect, send, read the answer into `feed`.
    private struct Exchange: Sendable {
        let request: ReachdRequest
        let address: ReachdEndpoint.Address
        let doorbell: ShutdownDoorbell
        let feed: AsyncThrowingStream<HTTPResponseReader.Part, any Error>.Continuation

        func run() {
            do {
                let connection = try ReachdConnection(
                    to: address,
                    caFile: request.endpoint.caFile,
                    connectTimeout: request.connectTimeout,
                    silenceLimit: request.silenceLimit,
                    doorbell: doorbell
                )
                try connection.write(request.encoded(host: address.hostHeader), limit: request.silenceLimit)
                var reader = HTTPResponseReader()
                while !reader.isComplete {
                    let bytes = try connection.read(limit: request.silenceLimit)
                    let parts = bytes.isEmpty ? try reader.finish() : try reader.feed(bytes)
                    for part in parts { feed.yield(part) }
                }
                feed.finish()
            } catch {
                feed.finish(throwing: error)
            }
        }
    }
}

/// What the caller's body threw, carried past the transport's own errors unchanged.
struct FromBody: Error {
    let error: any Error
}
