import AsyncHTTPClient
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import ReachCore
import Synchronization

/// Probes HTTP(S) health endpoints with AsyncHTTPClient: `GET url`, judged by status and body.
///
/// The target's timeout is a hard deadline for the whole exchange, body included: a timer cancels
/// the request when it passes (AsyncHTTPClient's own timeouts bound only the connect and the wait
/// for the head). Connection establishment is never retried.
///
/// Connections follow ``ConnectionPolicy``; the default opens a fresh connection for every probe, as
/// blackbox_exporter does, so that every probe proves the whole path (DNS, connect, TLS) and a pooled
/// connection can never hide a dead one. ``ConnectionPolicy/reuse(maximumUses:)`` trades some of that
/// proof for less CPU; the benchmark measures both.
public final class HTTPProber: Prober {
    /// Whether probes share connections.
    public enum ConnectionPolicy: Sendable, Hashable {
        /// A new connection (and TLS handshake) for every probe.
        case fresh
        /// Keep-alive connections, each used for at most `maximumUses` probes. A connection the
        /// server closed or a path that died still fails the next probe (refused, reset or timeout).
        case reuse(maximumUses: Int)
    }

    /// Bodies are read to the end but kept only up to this size for `body_contains` and `json`.
    static let bodyLimit = 1 << 20

    private let clients: Mutex<[ClientKey: HTTPClient]> = Mutex([:])
    /// Requests are built once per check: parsing the URL each second would cost more than the probe.
    private let requests: Mutex<[HTTPCheck: HTTPClient.Request]> = Mutex([:])
    private let eventLoopGroup: any EventLoopGroup
    /// AsyncHTTPClient's per-request logging: off, because one line per probe would drown the log.
    private static let silent = Logger(label: "reachd.http-probe") { _ in SwiftLogNoOpLogHandler() }
    private let connectionPolicy: ConnectionPolicy
    private let logger: Logger

    public init(
        connectionPolicy: ConnectionPolicy = .fresh, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger
    ) {
        self.connectionPolicy = connectionPolicy
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
    }

    /// Closes every connection. Call once when probing is over; probes after it fail.
    public func shutdown() async {
        let clients = self.clients.withLock { clients in
            defer { clients.removeAll() }
            return Array(clients.values)
        }
        for client in clients {
            try? await client.shutdown()
        }
    }

    public func probe(_ target: ProbeTarget) async -> ProbeResult {
        guard case .http(let check) = target.check else {
            return .failure(target.name, .protocolError, detail: "not an HTTP target", latency: .zero)
        }
        let started = ContinuousClock.now
        let request: HTTPClient.Request
        do {
            request = try cachedRequest(check)
        } catch {
            return .failure(target.name, .protocolError, detail: "cannot build the request: \(error)", latency: .zero)
        }
        let delegate = ExchangeDelegate(started: started, keepsBody: check.expectation.needsBody)
        let task = client(for: check, family: target.addressFamily).execute(
            request: request, delegate: delegate, deadline: nil, logger: Self.silent)
        let deadline = task.futureResult.eventLoop.scheduleTask(in: .init(target.timeout)) {
            delegate.timedOut()
            task.cancel()
        }
        let outcome: Result<Exchange, any Error> = await withTaskCancellationHandler {
            do { return .success(try await task.futureResult.get()) } catch { return .failure(error) }
        } onCancel: {
            task.cancel()
        }
        deadline.cancel()
        let elapsed = started.duration(to: .now)
        switch outcome {
        case .success(let exchange):
            return judge(exchange, of: target, check: check, elapsed: elapsed)
        case .failure(let error):
            let progress = delegate.progress
            var failure = HTTPFailureClassifier.classify(
                error, timedOut: progress.timedOut, phase: progress.phase(isTLS: check.isHTTPS))
            if Task.isCancelled, !progress.timedOut { failure = ProbeFailure(.cancelled, phase: failure.phase) }
            return ProbeResult(target: target.name, failure: failure, timings: progress.timings(total: elapsed))
        }
    }

    private func cachedRequest(_ check: HTTPCheck) throws -> HTTPClient.Request {
        if let request = requests.withLock({ $0[check] }) { return request }
        let request = try makeRequest(check)
        requests.withLock { $0[check] = request }
        return request
    }

    private func makeRequest(_ check: HTTPCheck) throws -> HTTPClient.Request {
        var headers = HTTPHeaders()
        headers.add(name: "User-Agent", value: "reachd/\(ReachVersion.current)")
        for field in check.headers {
            headers.add(name: field.name, value: field.value)
        }
        if let token = check.bearerToken {
            headers.replaceOrAdd(name: "Authorization", value: "Bearer \(token.revealed)")
        }
        if case .fresh = connectionPolicy {
            headers.replaceOrAdd(name: "Connection", value: "close")
        }
        var url = check.url
        if let serverName = check.tls.serverName {
            // SNI and certificate checks follow the URL's host: ask for the server name, and map it
            // back to the real address in this client's DNS overrides.
            url = url.replacingHost(check.endpoint.host, with: serverName)
        }
        var tls: TLSConfiguration?
        if let caFile = check.tls.caFile {
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.additionalTrustRoots = [.file(caFile)]
            tls = configuration
        }
        return try HTTPClient.Request(url: url, method: .GET, headers: headers, tlsConfiguration: tls)
    }

    /// One client per address family and set of DNS overrides (targets with a `server_name`); most
    /// targets share one.
    private func client(for check: HTTPCheck, family: AddressFamily) -> HTTPClient {
        let key = ClientKey(family: family, serverName: check.tls.serverName, host: check.endpoint.host)
        return clients.withLock { clients in
            if let client = clients[key] { return client }
            let overrides = key.serverName.map { [$0: check.endpoint.host] } ?? [:]
            var configuration = HTTPClient.Configuration(
                redirectConfiguration: .disallow,
                // Beyond any probe deadline: the probe's own timer decides, and names the phase.
                timeout: .init(connect: .minutes(6)),
                decompression: .disabled)
            configuration.connectionPool.retryConnectionEstablishment = false
            configuration.dnsOverride = overrides
            switch family {
            case .auto: break
            // Binding to the family's wildcard address makes every attempt of the other family fail.
            case .ipv4: configuration.localAddress = "0.0.0.0"
            case .ipv6: configuration.localAddress = "::"
            }
            configuration.httpVersion = .http1Only
            switch connectionPolicy {
            case .fresh: configuration.maximumUsesPerConnection = 1
            case .reuse(let maximumUses): configuration.maximumUsesPerConnection = maximumUses
            }
            let client = HTTPClient(eventLoopGroupProvider: .shared(eventLoopGroup), configuration: configuration, backgroundActivityLogger: logger)
            clients[key] = client
            return client
        }
    }

    /// What sets clients apart: the family they bind to, and the DNS override a `server_name` needs.
    private struct ClientKey: Hashable {
        var family: AddressFamily
        var serverName: String?
        /// Only matters with a server name: the address it stands for.
        var host: String?

        init(family: AddressFamily, serverName: String?, host: String) {
            self.family = family
            self.serverName = serverName
            self.host = serverName == nil ? nil : host
        }
    }

    private func judge(_ exchange: Exchange, of target: ProbeTarget, check: HTTPCheck, elapsed: Duration) -> ProbeResult {
        let timings = exchange.progress.timings(total: elapsed)
        let expectation = check.expectation
        guard expectation.accepts(status: exchange.status) else {
            return ProbeResult(
                target: target.name, failure: ProbeFailure(.httpStatus(exchange.status), phase: .head, detail: "HTTP \(exchange.status)"),
                timings: timings)
        }
        if let mismatch = expectation.mismatch(in: exchange.body) {
            let detail = exchange.bodyIsCut ? "\(mismatch) (only the first \(HTTPProber.bodyLimit >> 20) MiB of the body is read)" : mismatch
            return ProbeResult(target: target.name, failure: ProbeFailure(.unexpectedBody, phase: .body, detail: detail), timings: timings)
        }
        return ProbeResult(target: target.name, timings: timings)
    }
}

extension String {
    /// The URL with its authority's host replaced (first occurrence after the scheme); an IPv6
    /// literal's brackets go with it, since the replacement is a name.
    func replacingHost(_ host: String, with replacement: String) -> String {
        guard let schemeEnd = range(of: "://") else { return self }
        let authority = schemeEnd.upperBound..<endIndex
        guard let hostRange = range(of: "[\(host)]", range: authority) ?? range(of: host, range: authority) else { return self }
        return replacingCharacters(in: hostRange, with: replacement)
    }
}
