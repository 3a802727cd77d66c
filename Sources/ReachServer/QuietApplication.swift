import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ReachPOSIX
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// A Hummingbird application that runs only its server: no background task of its own.
///
/// Hummingbird's stock `run()` adds a service that wakes every second to format the `Date` header,
/// whether or not anyone is asking; on an idle daemon that tick (and the executor threads it wakes)
/// was the only thing running. This application formats the header when a response needs it
/// (``DateHeader``, cached per second), so an idle reachd sleeps. Everything else (routing,
/// middleware, connection limits, the HTTP/1 channel, graceful shutdown) is Hummingbird's own.
struct QuietApplication<Responder: HTTPResponder>: ApplicationProtocol
where Responder.Context: InitializableFromSource<ApplicationRequestContextSource> {
    let responder: Responder
    let server: HTTPServerBuilder
    let configuration: ApplicationConfiguration
    let logger: Logger
    let whenRunning: @Sendable (any Channel) async -> Void

    func onServerRunning(_ channel: any Channel) async {
        await whenRunning(channel)
    }

    func run() async throws {
        let responder = self.responder
        let logger = self.logger
        let configuration = self.configuration
        let server = try self.server.buildServer(
            configuration: ServerConfiguration(
                address: configuration.address,
                serverName: configuration.serverName,
                backlog: configuration.backlog,
                reuseAddress: configuration.reuseAddress,
                availableConnectionsDelegate: configuration.availableConnectionsDelegate
            ),
            eventLoopGroup: eventLoopGroup,
            logger: logger
        ) { request, responseWriter, channel in
            let context = Responder.Context(source: .init(channel: channel, logger: logger))
            var response: Response
            do {
                response = try await responder.respond(to: request, context: context)
            } catch let error as HTTPParserError {
                throw error
            } catch {
                logger.debug("unhandled error in a responder", metadata: ["error": "\(error)"])
                response = Response(status: .internalServerError)
            }
            response.headers[.date] = DateHeader.now
            if let serverName = configuration.serverName {
                response.headers[.server] = serverName
            }
            let bodyWriter = try await responseWriter.writeHead(response.head)
            try await response.body.write(bodyWriter)
        } onServerRunning: { channel in
            await self.onServerRunning(channel)
        }
        do {
            try await server.run()
        } catch {
            throw Self.bindFailure(error) ?? error
        }
    }

    /// What the server throws when it cannot bind, in the system's terms (the server throws
    /// nothing else once it runs), for whoever runs it to say in its words.
    static func bindFailure(_ error: any Error) -> SystemCallError? {
        switch error {
        case let error as IOError: SystemCallError("bind", code: error.errnoCode)
        case SocketAddressError.unixDomainSocketPathTooLong: SystemCallError("bind", code: ENAMETOOLONG)
        case is SocketAddressError.UnknownHost: SystemCallError("bind", code: EADDRNOTAVAIL)
        case is UnixDomainSocketPathWrongType: SystemCallError("bind", code: ENOTSOCK)
        default: nil
        }
    }
}
