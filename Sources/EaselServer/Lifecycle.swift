import EaselSupport
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

extension ImageServer {
    /// Listens until SIGTERM or SIGINT, then stops accepting, lets the requests in flight finish,
    /// writes the caches (`shutdown()`) and returns. Prints the address once listening.
    ///
    /// - Parameters:
    ///   - services: run beside the server and stopped after it (a tracer's exporter, which
    ///     then sends what is left).
    ///   - onListening: called with the address once the server listens (by default it prints
    ///     the gallery's URL).
    public func run(services: [any Service] = [], onListening: @escaping @Sendable (String) -> Void = ImageServer.announce) async throws {
        let drain = ListenerDrain()
        let app = Application(
            router: router(),
            server: httpServer(),
                        // A deep accept queue: a burst of connections waits in the kernel instead of having
            // its SYNs dropped (and retried a second later) while the cap recycles idle ones.
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "easel", backlog: 4096),
            services: [CacheFlusher(server: self)],
            onServerRunning: { channel in
                drain.listening(on: channel)
                let address = channel.localAddress
                onListening("\(address?.ipAddress ?? "?"):\(address?.port ?? 0)")
            },
            logger: Logger(label: "easel.serve"))
        // Shut down in reverse order: the listener's accept queue is drained first, then the
        // HTTP server stops (closing the listener, finishing what is in flight).
        let logger = Logger(label: "easel.serve")
        var groupConfiguration = ServiceGroupConfiguration(services: services + [app, drain], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        // Never a shutdown that hangs: past the longest a request may take plus the longest a
        // closing connection may drain, what is left is cancelled.
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(configuration.requestTimeout + 35)
        try await ServiceGroup(configuration: groupConfiguration).run()
    }
}

/// At shutdown, before the HTTP server closes its listener: new connections are refused at the
/// door (a socket filter drops their SYNs: the client retries, then finds the port closed, about
/// a second later) and the connections the kernel has completed or is completing are accepted
/// (and then served and closed as every other), instead of being reset when the listener
/// closes under them. Linux only; elsewhere, or when an option fails, the listener simply closes.
final class ListenerDrain: Service, Sendable {
    private let channel = Locked<(any Channel)?>(nil)

    /// At least this long between the filter and the listener's close: handshakes under way
    /// (a SYN-ACK already sent, a round trip away) complete and are accepted meanwhile.
    static let minimum: Duration = .milliseconds(250)
    /// At most this long for the accept queue to empty.
    static let limit: Duration = .seconds(1)

    func listening(on channel: any Channel) { self.channel.withLock { $0 = channel } }

    func run() async throws {
        // Returning before the shutdown would end the whole service group.
        try? await gracefulShutdown()
        #if os(Linux)
        guard let provider = channel.withLock({ $0 }) as? any SocketOptionProvider else { return }
        do {
            try await provider.unsafeSetSocketOption(level: ListenerSocket.socketLevel, name: ListenerSocket.attachFilter,
                                                     value: ListenerSocket.dropNewConnections).get()
            let start = ContinuousClock.now
            var empty = 0
            while empty < 2 || ContinuousClock.now - start < Self.minimum, ContinuousClock.now - start < Self.limit {
                let info: ListenerSocket.InfoPrefix = try await provider.unsafeGetSocketOption(
                    level: ListenerSocket.tcpLevel, name: ListenerSocket.tcpInfo).get()
                empty = info.acceptQueueLength == 0 ? empty + 1 : 0
                try await Task.sleep(for: .milliseconds(10))
            }
        } catch {
            Logger(label: "easel.serve").debug("listener drain skipped: \(error)")
        }
        #endif
    }
}

extension ImageServer {
    /// Prints the address at once (unbuffered: a supervisor reading a pipe sees it).
    public static let announce: @Sendable (String) -> Void = { address in
        FileHandle.standardOutput.write(Data("easel serve: listening on http://\(address)/\n".utf8))
    }
}

/// Waits for the graceful shutdown, then writes the caches.
struct CacheFlusher: Service {
    let server: ImageServer
    func run() async throws {
        try? await gracefulShutdown()
        await server.shutdown()
    }
}
